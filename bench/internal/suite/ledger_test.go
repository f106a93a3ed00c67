package suite

import (
	"testing"
	"time"

	"github.com/picoclaw-suite/picoclaw/pkg/testinfra/fakeline"
	"github.com/picoclaw-suite/picoclaw/pkg/testinfra/fakellm"
)

func TestMarkerFindsTheLastNumber(t *testing.T) {
	if n, ok := Marker(Marked("散歩に行こうかな", 1234)); !ok || n != 1234 {
		t.Fatalf("round trip: %d %v", n, ok)
	}
	// A prompt quoting earlier turns names the latest message last.
	if n, ok := Marker(Marked("前の話", 7) + "\n" + Marked("今の話", 8)); !ok || n != 8 {
		t.Fatalf("last marker: %d %v", n, ok)
	}
	for _, s := range []string{"", "#12", "(#12)", "（#）"} {
		if n, ok := Marker(s); ok {
			t.Errorf("Marker(%q) = %d", s, n)
		}
	}
}

// The fake model repeats the number of the latest user message, not of earlier turns.
func TestOllamaAnswerNamesTheLatestUserMessage(t *testing.T) {
	msgs := []fakellm.Message{
		{Role: "system", Content: "persona"},
		{Role: "user", Content: Marked("a", 1)},
		{Role: "assistant", Content: Marked("ok", 1)},
		{Role: "user", Content: Marked("b", 2)},
	}
	if n, ok := lastUserMarker(msgs); !ok || n != 2 {
		t.Fatalf("lastUserMarker = %d %v", n, ok)
	}
	if _, ok := lastUserMarker(msgs[:1]); ok {
		t.Fatal("a prompt without a user message has no marker")
	}
}

func sent(kind, text string, at time.Time) fakeline.Sent {
	return fakeline.Sent{Kind: kind, Messages: []fakeline.Message{{Type: "text", Text: text}}, At: at}
}

// Every acknowledged message should have exactly one answer, reply or push: the ledger tells
// lost from duplicated from answers that belong to no acknowledged message.
func TestLedgerCountsLostDuplicatedAndStrayAnswers(t *testing.T) {
	l := NewLedger(5)
	w1 := l.Await(1)
	at := time.Now()
	l.Record(sent("reply", Marked("了解", 1), at))
	select {
	case got := <-w1:
		if !got.Equal(at) {
			t.Fatalf("waiter got %v, want %v", got, at)
		}
	default:
		t.Fatal("waiter of message 1 not served")
	}
	l.Record(sent("push", Marked("了解", 1), at.Add(time.Second))) // 1 answered twice
	l.Record(sent("push", Marked("了解", 2), at))                  // 2 answered by push
	l.Record(sent("reply", Marked("了解", 5), at))                 // 5 was refused by the webhook
	l.Record(sent("reply", "no number", at))                     // names no message
	l.Record(sent("reply", Marked("了解", 99), at))                // not a message of this ledger
	// Awaiting a message already answered returns its first answer at once.
	select {
	case got := <-l.Await(1):
		if !got.Equal(at) {
			t.Fatalf("late waiter got %v", got)
		}
	default:
		t.Fatal("late waiter of message 1 not served")
	}
	got := l.Tally([]int{1, 2, 3, 4}) // 3 and 4 acknowledged, never answered
	want := Tally{Answered: 2, Lost: 2, Duplicated: 1, Unattributed: 3}
	if got != want {
		t.Fatalf("tally %+v, want %+v", got, want)
	}
}
