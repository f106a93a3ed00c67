package domain

import (
	"regexp"
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

// requestJaPattern is requestJa as one regular expression, the way it was first written.
var requestJaPattern = regexp.MustCompile(`(して|てください|て下さい|てほしい|て欲しい|ってくれ|お願い|頼む|作って|書いて|直して|変えて|消して|追加|作成|削除|変更|修正|実行|設定して|まとめて|教えてください)`)

// patternsMatch is what asksForWork answers, by running every pattern on the whole text.
func patternsMatch(t string) bool {
	return workMarkers.MatchString(t) || requestJaPattern.MatchString(t) || requestEn.MatchString(t)
}

var workTexts = []string{
	"やあ、元気?", "ありがとう！", "見て https://example.com", "www.example.com", "a;b", "$(rm -rf)", "main.go が変",
	"~/src/x/", "../a/b", "a/b/c", "`x`", "お願いします", "これ作って", "教えてください", "fix it", "  please help",
	"Could You help", "ſet the timer", "K", "\u212aeep going", "ＦＩＸ it", "こんにちは。元気？", "12345", "",
	"Ünïcödé text", "test", "do it, will you?", "pleased", "the list", "明日の天気", "設定して", "設定",
}

// The byte searches before each pattern never change its answer: every text is asked for work
// exactly when one of the patterns matches it.
func TestAsksForWorkIsThePatterns(t *testing.T) {
	for _, text := range workTexts {
		if got, want := asksForWork(text), patternsMatch(text); got != want {
			t.Errorf("%q: %v, the patterns say %v", text, got, want)
		}
	}
}

func FuzzAsksForWorkIsThePatterns(f *testing.F) {
	for _, text := range workTexts {
		f.Add(text)
	}
	f.Fuzz(func(t *testing.T, text string) {
		if got, want := asksForWork(text), patternsMatch(text); got != want {
			t.Fatalf("%q: %v, the patterns say %v", text, got, want)
		}
	})
}

func BenchmarkSignals(b *testing.B) {
	texts := []string{"やあ、元気? 今日はいい天気だね", "thanks, that was helpful!", "README を更新してください"}
	for b.Loop() {
		for _, text := range texts {
			Signals(text, RouteChat)
		}
	}
}
