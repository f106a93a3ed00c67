package domain

import (
	"strings"
	"testing"
)

func TestSignals(t *testing.T) {
	tests := []struct {
		text string
		prev Route
		chat bool
	}{
		{"やあ、元気?", RouteUnspecified, true},
		{"ありがとう！助かったよ", RouteUnspecified, true},
		{"thanks, that was helpful!", RouteUnspecified, true},
		{"what do you think about rainy days?", RouteUnspecified, true},
		{"", RouteUnspecified, false},
		// Anything that may ask for work goes to the classifier.
		{"ちょっと相談してもいい?", RouteUnspecified, false},
		{"README を更新してください", RouteUnspecified, false},
		{"ログイン画面を作って", RouteUnspecified, false},
		{"fix the login page", RouteUnspecified, false},
		{"could you look at this?", RouteUnspecified, false},
		{"please summarize it", RouteUnspecified, false},
		{"main.go が変", RouteUnspecified, false},
		{"見て https://example.com", RouteUnspecified, false},
		{"`x := 1` どう?", RouteUnspecified, false},
		{"src/app/ の中身", RouteUnspecified, false},
		{"if (a) { b; }", RouteUnspecified, false},
		{"a\nb\nc\nd", RouteUnspecified, false},
		// Length: short alone; a chat conversation continues with longer messages.
		{strings.Repeat("とても長い雑談", 20), RouteUnspecified, false},
		{strings.Repeat("とても長い雑談", 20), RouteChat, true},
		{strings.Repeat("とても長い雑談", 60), RouteChat, false},
	}
	for _, tt := range tests {
		d, ok := Signals(tt.text, tt.prev)
		if ok != tt.chat {
			t.Errorf("%q (prev %s): chat=%v, want %v", tt.text, tt.prev, ok, tt.chat)
			continue
		}
		if ok && (d.Route != RouteChat || d.Source != SourceSignals || d.Confidence <= 0 || len(d.Evidence) == 0) {
			t.Errorf("%q: decision %+v", tt.text, d)
		}
	}
}
