package domain

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"

	"github.com/picoclaw-suite/picoclaw/pkg/chatlink"
)

const testTrace = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"

func TestButtonRoundTrip(t *testing.T) {
	for _, a := range []Action{
		{Kind: chatlink.ActionApprove, JobID: "job_20261121_001"},
		{Kind: chatlink.ActionDeny, JobID: "job_20261121_001"},
		{Kind: chatlink.ActionPick, JobID: "job_20261121_001", Value: "2"},
		{Kind: chatlink.ActionApprove, JobID: "job_20261121_001", Trace: testTrace},
		{Kind: chatlink.ActionPick, JobID: "job_20261121_001", Value: "2", Trace: testTrace},
	} {
		got, err := ParseButton(string(a.Kind), ButtonValue(a))
		if err != nil || got != a {
			t.Errorf("round trip %+v -> %+v, %v", a, got, err)
		}
	}
	// A last part that is not a traceparent stays in the value (buttons sent before traces).
	if got, err := ParseButton("pick", "job_20261121_001|2|x"); err != nil || got.Value != "2|x" || got.Trace != "" {
		t.Errorf("legacy value parsed as %+v, %v", got, err)
	}
	for _, tc := range []struct{ id, value string }{{"launch", "job_1"}, {"approve", ""}, {"deny", "|2"}} {
		if _, err := ParseButton(tc.id, tc.value); !errors.Is(err, ErrInvalid) {
			t.Errorf("ParseButton(%q, %q) = %v", tc.id, tc.value, err)
		}
	}
}

func TestStripMention(t *testing.T) {
	for _, tc := range []struct{ in, bot, want string }{
		{"<@UBOT> こんにちは", "UBOT", "こんにちは"},
		{"  <@UBOT>   /approve job_1 ", "UBOT", "/approve job_1"},
		{"<@UOTHER> hi", "UBOT", "<@UOTHER> hi"},
		{"<@UBOT> hi", "", "hi"},
		{"no mention", "UBOT", "no mention"},
	} {
		if got := StripMention(tc.in, tc.bot); got != tc.want {
			t.Errorf("StripMention(%q) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestCompose(t *testing.T) {
	ja := TextsFor("ja")
	job := "job_20261121_002"
	t.Run("model text cannot mention anyone", func(t *testing.T) {
		got := Compose([]Reply{{Text: "<!channel> hi <@U123> & <https://x|y>"}}, ja)
		if strings.ContainsAny(got[0].Text, "<>") || !strings.Contains(got[0].Text, "&lt;!channel&gt;") || !strings.Contains(got[0].Text, "&amp;") {
			t.Fatalf("text %q", got[0].Text)
		}
	})
	t.Run("buttons on the last part with typed commands", func(t *testing.T) {
		r := Reply{Text: strings.Repeat("あ", 6000), Actions: []Action{{Kind: chatlink.ActionApprove, JobID: job}, {Kind: chatlink.ActionDeny, JobID: job}}}
		got := Compose([]Reply{r}, ja)
		if len(got) != 3 {
			t.Fatalf("%d messages", len(got))
		}
		for i, m := range got {
			if utf8.RuneCountInString(m.Text) > MaxTextLen {
				t.Fatalf("message %d has %d characters", i, utf8.RuneCountInString(m.Text))
			}
			if (len(m.Buttons) > 0) != (i == 2) {
				t.Fatalf("buttons on message %d", i)
			}
		}
		if !strings.Contains(got[2].Text, "/approve "+job) || !strings.Contains(got[2].Text, "/deny "+job) {
			t.Fatalf("commands missing: %q", got[2].Text)
		}
	})
	t.Run("a trace that does not fit is dropped, not the button", func(t *testing.T) {
		long := strings.Repeat("x", MaxButtonValue-len(job)-10)
		got := Compose([]Reply{{Text: "pick", Actions: []Action{{Kind: chatlink.ActionPick, JobID: job, Value: long, Trace: testTrace}}}}, ja)
		if len(got) != 1 || len(got[0].Buttons) != 1 || got[0].Buttons[0].Trace != "" || got[0].Buttons[0].Value != long {
			t.Fatalf("got %+v", got)
		}
	})
	t.Run("cap keeps the buttons", func(t *testing.T) {
		var rs []Reply
		for range 12 {
			rs = append(rs, Reply{Text: "part"})
		}
		rs = append(rs, Reply{Text: "decide", Actions: []Action{{Kind: chatlink.ActionApprove, JobID: job}}})
		got := Compose(rs, ja)
		if len(got) != MaxMessages || len(got[MaxMessages-1].Buttons) != 1 {
			t.Fatalf("got %d messages, last %+v", len(got), got[len(got)-1])
		}
	})
	t.Run("cap announces the cut", func(t *testing.T) {
		var rs []Reply
		for range 12 {
			rs = append(rs, Reply{Text: "part"})
		}
		got := Compose(rs, TextsFor("en"))
		if len(got) != MaxMessages || !strings.Contains(got[MaxMessages-1].Text, "cut off") {
			t.Fatalf("got %+v", got[len(got)-1])
		}
	})
}

func TestSessions(t *testing.T) {
	in := Inbound{EventID: "Ev1", Kind: KindMessage, Channel: "C1", ThreadTS: "1700000000.000100", UserID: "U1"}
	if in.SessionID() != "slack:C1:1700000000.000100" || in.Key() != "C1:1700000000.000100" {
		t.Fatalf("session %s key %s", in.SessionID(), in.Key())
	}
	ch, th, err := ParseSession(in.SessionID())
	if err != nil || ch != "C1" || th != "1700000000.000100" {
		t.Fatalf("ParseSession = %s %s %v", ch, th, err)
	}
	for _, bad := range []string{"line:U1", "slack:", "slack::1.2"} {
		if _, _, err := ParseSession(bad); !errors.Is(err, ErrInvalid) {
			t.Errorf("ParseSession(%q) = %v", bad, err)
		}
	}
	b, _ := in.Encode()
	if got, err := DecodeInbound(b); err != nil || got != in {
		t.Fatalf("decode %+v %v", got, err)
	}
	for _, bad := range []string{"{", `{"event_id":"e","kind":"action","channel":"C","thread_ts":"1"}`} {
		if _, err := DecodeInbound([]byte(bad)); !errors.Is(err, ErrInvalid) {
			t.Errorf("DecodeInbound(%s) = %v", bad, err)
		}
	}
}

func TestDecidedNote(t *testing.T) {
	if got := TextsFor("ja").DecidedNote("U1", Action{Kind: chatlink.ActionApprove}); got != "<@U1> が選択しました: 承認" {
		t.Fatalf("note %q", got)
	}
}
