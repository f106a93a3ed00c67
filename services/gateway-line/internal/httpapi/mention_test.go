package httpapi

import (
	"testing"

	"github.com/line/line-bot-sdk-go/v8/linebot/webhook"
)

// The bot's own mention is taken out of the text (UTF-16 positions), so "@Mio /status" typed in
// a group is the command /status; other mentions stay.
func TestWithoutSelfMention(t *testing.T) {
	self := func(i, n int32) *webhook.Mention {
		return &webhook.Mention{Mentionees: []webhook.MentioneeInterface{webhook.UserMentionee{Index: i, Length: n, IsSelf: true}}}
	}
	for _, tc := range []struct {
		text      string
		m         *webhook.Mention
		mentioned bool
		want      string
	}{
		{"@Mio /auto-approve off", self(0, 4), true, "/auto-approve off"},
		{"😀 @Mio 調べて", self(3, 4), true, "😀  調べて"},
		{"@Taro hello", &webhook.Mention{Mentionees: []webhook.MentioneeInterface{webhook.UserMentionee{Index: 0, Length: 5}}}, false, "@Taro hello"},
		{"no mention", nil, false, "no mention"},
	} {
		mentioned, got := withoutSelfMention(tc.text, tc.m)
		if mentioned != tc.mentioned || got != tc.want {
			t.Errorf("%q: %v %q, want %v %q", tc.text, mentioned, got, tc.mentioned, tc.want)
		}
	}
}
