package domain

import (
	"errors"
	"strings"
	"testing"
	"time"
	"unicode/utf16"

	"github.com/picoclaw-suite/picoclaw/pkg/chatlink"
)

func TestUseReplyToken(t *testing.T) {
	now := time.Date(2026, 11, 21, 12, 0, 0, 0, time.UTC)
	margin := 50 * time.Second
	fresh := Inbound{ReplyToken: "rt", Timestamp: now.Add(-10 * time.Second)}
	for _, tc := range []struct {
		name        string
		in          Inbound
		redelivered bool
		attempt     int
		want        bool
	}{
		{"fresh event", fresh, false, 1, true},
		{"no token", Inbound{Timestamp: now}, false, 1, false},
		{"older than margin", Inbound{ReplyToken: "rt", Timestamp: now.Add(-51 * time.Second)}, false, 1, false},
		{"exactly at margin", Inbound{ReplyToken: "rt", Timestamp: now.Add(-margin)}, false, 1, false},
		{"LINE redelivery", Inbound{ReplyToken: "rt", Timestamp: now, Redelivery: true}, false, 1, false},
		{"reclaimed after crash", fresh, true, 1, false},
		{"second attempt", fresh, false, 2, false},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := UseReplyToken(tc.in, tc.redelivered, tc.attempt, now, margin); got != tc.want {
				t.Fatalf("UseReplyToken = %v, want %v", got, tc.want)
			}
		})
	}
}

func u16(s string) int { return len(utf16.Encode([]rune(s))) }

func TestSplitText(t *testing.T) {
	emoji := strings.Repeat("😀", 3000) // 2 UTF-16 units each
	lines := strings.Repeat(strings.Repeat("あ", 99)+"\n", 120)
	for _, tc := range []struct {
		name   string
		in     string
		limit  int
		pieces int
	}{
		{"empty", "", 5000, 0},
		{"short", "こんにちは", 5000, 1},
		{"exact", strings.Repeat("a", 5000), 5000, 1},
		{"one over", strings.Repeat("a", 5001), 5000, 2},
		{"surrogate pairs", emoji, 5000, 2},
		{"prefers line breaks", lines, 5000, 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := SplitText(tc.in, tc.limit)
			if len(got) != tc.pieces {
				t.Fatalf("pieces = %d, want %d", len(got), tc.pieces)
			}
			total := 0
			for _, p := range got {
				if u16(p) > tc.limit {
					t.Fatalf("piece of %d units > %d", u16(p), tc.limit)
				}
				if strings.ContainsRune(p, '\uFFFD') {
					t.Fatal("a character was split")
				}
				total += len([]rune(strings.ReplaceAll(p, "\n", "")))
			}
			if want := len([]rune(strings.ReplaceAll(tc.in, "\n", ""))); total != want {
				t.Fatalf("kept %d characters, want %d", total, want)
			}
			if tc.name == "prefers line breaks" && !strings.HasSuffix(got[0], "あ") {
				t.Fatal("first piece does not end at a line break")
			}
		})
	}
}

const testTrace = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"

func TestPostbackRoundTrip(t *testing.T) {
	for _, tc := range []struct {
		name string
		a    Action
		ok   bool
	}{
		{"approve", Action{Kind: chatlink.ActionApprove, JobID: "job_20261121_001"}, true},
		{"deny", Action{Kind: chatlink.ActionDeny, JobID: "job_20261121_001"}, true},
		{"pick with value", Action{Kind: chatlink.ActionPick, JobID: "job_20261121_001", Value: "2"}, true},
		{"too long for 300 bytes", Action{Kind: chatlink.ActionPick, JobID: "job_20261121_001", Value: strings.Repeat("x", 290)}, false},
		{"approve with trace", Action{Kind: chatlink.ActionApprove, JobID: "job_20261121_001", Trace: testTrace}, true},
		{"pick with value and trace", Action{Kind: chatlink.ActionPick, JobID: "job_20261121_001", Value: "3", Trace: testTrace}, true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			data, ok := EncodePostback(tc.a)
			if ok != tc.ok {
				t.Fatalf("fits = %v, want %v (%d bytes)", ok, tc.ok, len(data))
			}
			if !ok {
				return
			}
			if len(data) > MaxPostbackData {
				t.Fatalf("data %d bytes", len(data))
			}
			got, err := DecodePostback(data)
			if err != nil || got != tc.a {
				t.Fatalf("decoded %+v, %v; want %+v", got, err, tc.a)
			}
		})
	}
	// A value that fits only without the trace keeps the button and drops the trace.
	long := Action{Kind: chatlink.ActionPick, JobID: "job_20261121_001", Value: strings.Repeat("x", 230), Trace: testTrace}
	data, ok := EncodePostback(long)
	got, err := DecodePostback(data)
	if !ok || len(data) > MaxPostbackData || err != nil || got.Trace != "" || got.Value != long.Value {
		t.Fatalf("long value: %d bytes, ok=%v, decoded %+v, %v", len(data), ok, got, err)
	}
	for _, bad := range []string{"", "a=launch&j=job_1", "a=approve", "%zz"} {
		if _, err := DecodePostback(bad); !errors.Is(err, ErrInvalid) {
			t.Errorf("DecodePostback(%q) err = %v, want ErrInvalid", bad, err)
		}
	}
}

func TestCompose(t *testing.T) {
	ja := TextsFor("ja")
	job := "job_20261121_007"
	approval := Reply{Text: "承認が必要です: " + job, JobID: job, Actions: []Action{
		{Kind: chatlink.ActionApprove, JobID: job}, {Kind: chatlink.ActionDeny, JobID: job},
	}}
	t.Run("plain text", func(t *testing.T) {
		got := Compose([]Reply{{Text: "はい"}}, ja, nil)
		if len(got) != 1 || got[0].Text != "はい" || got[0].Confirm != nil {
			t.Fatalf("got %+v", got)
		}
	})
	t.Run("approval becomes confirm template plus typed commands", func(t *testing.T) {
		got := Compose([]Reply{approval}, ja, nil)
		if len(got) != 2 || got[1].Confirm == nil {
			t.Fatalf("got %+v", got)
		}
		for _, c := range []string{"/approve " + job, "/deny " + job} {
			if !strings.Contains(got[0].Text, c) {
				t.Errorf("text lacks typed command %q", c)
			}
		}
		c := got[1].Confirm
		if c.Yes.DisplayText != "/approve "+job || c.No.DisplayText != "/deny "+job {
			t.Errorf("display texts %q %q", c.Yes.DisplayText, c.No.DisplayText)
		}
		for _, b := range []Button{c.Yes, c.No} {
			if len(b.Data) > MaxPostbackData {
				t.Errorf("postback data %d bytes", len(b.Data))
			}
		}
		if a, err := DecodePostback(c.Yes.Data); err != nil || a.Kind != chatlink.ActionApprove || a.JobID != job {
			t.Errorf("yes button decodes to %+v, %v", a, err)
		}
	})
	t.Run("commands already in text are not repeated", func(t *testing.T) {
		r := approval
		r.Text = "承認: /approve " + job + " 却下: /deny " + job
		got := Compose([]Reply{r}, ja, nil)
		if strings.Count(got[0].Text, "/approve") != 1 {
			t.Fatalf("text %q", got[0].Text)
		}
	})
	t.Run("pick options become quick replies", func(t *testing.T) {
		var acts []Action
		for _, v := range []string{"1", "2", "3"} {
			acts = append(acts, Action{Kind: chatlink.ActionPick, JobID: job, Value: v, Label: "案" + v})
		}
		got := Compose([]Reply{{Text: "どれにしますか", Actions: acts}}, ja, nil)
		if len(got) != 1 || len(got[0].QuickReplies) != 3 || got[0].QuickReplies[1].DisplayText != "/pick "+job+" 2" {
			t.Fatalf("got %+v", got)
		}
	})
	t.Run("long text stays within five messages and keeps the buttons", func(t *testing.T) {
		long := Reply{Text: strings.Repeat("長", 30000)}
		got := Compose([]Reply{long, approval}, ja, nil)
		if len(got) != MaxMessages {
			t.Fatalf("%d messages", len(got))
		}
		if got[len(got)-1].Confirm == nil {
			t.Fatal("buttons were dropped")
		}
		truncatedSeen := false
		for _, m := range got {
			if m.Confirm == nil && u16(m.Text) > MaxTextLen {
				t.Fatalf("message of %d units", u16(m.Text))
			}
			truncatedSeen = truncatedSeen || strings.Contains(m.Text, ja.Truncated)
		}
		if !truncatedSeen {
			t.Fatal("truncation is not announced")
		}
	})
	t.Run("english", func(t *testing.T) {
		got := Compose([]Reply{approval}, TextsFor("en"), nil)
		if got[1].Confirm.Yes.Label != "Approve" || !strings.Contains(got[1].Confirm.Text, "Approve "+job) {
			t.Fatalf("got %+v", got[1].Confirm)
		}
	})
}

func TestRetryKey(t *testing.T) {
	a, b := RetryKey("event:01H0"), RetryKey("event:01H0")
	if a != b || a == RetryKey("event:01H1") {
		t.Fatal("retry keys are not stable per name")
	}
	const u = "123e4567-e89b-12d3-a456-426614174000"
	if RetryKey(u) != u {
		t.Fatal("a UUID is not used as it is")
	}
}

func TestDecodeInbound(t *testing.T) {
	in := Inbound{EventID: "e", Kind: KindText, ChatID: "U1", SourceType: SourceUser, Timestamp: time.UnixMilli(1700000000000)}
	b, _ := in.Encode()
	got, err := DecodeInbound(b)
	if err != nil || got.EventID != "e" || !got.Timestamp.Equal(in.Timestamp) || got.SessionID() != "line:U1" || got.IsGroup() {
		t.Fatalf("got %+v, %v", got, err)
	}
	for _, bad := range []string{"{", `{"kind":"text"}`} {
		if _, err := DecodeInbound([]byte(bad)); !errors.Is(err, ErrInvalid) {
			t.Errorf("DecodeInbound(%s) = %v", bad, err)
		}
	}
}
