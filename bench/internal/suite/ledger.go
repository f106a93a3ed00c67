package suite

import (
	"fmt"
	"regexp"
	"strconv"
	"sync"
	"time"

	"github.com/picoclaw-suite/picoclaw/pkg/testinfra/fakeline"
)

// Marked is text carrying message number n, in a form the router's cheap signals still take
// for plain conversation. The fake Ollama repeats the number of the user's latest message in
// its answer, so every answer at the fake LINE API — reply or push — names its message.
func Marked(text string, n int) string { return fmt.Sprintf("%s（#%d）", text, n) }

var markerRE = regexp.MustCompile(`（#(\d+)）`)

// Marker is the number of the last marked message in text.
func Marker(text string) (int, bool) {
	all := markerRE.FindAllStringSubmatch(text, -1)
	if len(all) == 0 {
		return 0, false
	}
	n, err := strconv.Atoi(all[len(all)-1][1])
	return n, err == nil
}

// Ledger counts the answers to numbered messages: each message should get exactly one, as a
// reply or (when the reply token was refused or too old) as a push.
type Ledger struct {
	mu      sync.Mutex
	answers []int
	first   []time.Time
	waiters []chan time.Time
	// unattributed are answers that name no message of the ledger.
	unattributed int
}

// NewLedger expects messages 1..n.
func NewLedger(n int) *Ledger {
	return &Ledger{answers: make([]int, n+1), first: make([]time.Time, n+1), waiters: make([]chan time.Time, n+1)}
}

// Await returns a channel that receives the arrival time of message n's first answer.
func (l *Ledger) Await(n int) <-chan time.Time {
	ch := make(chan time.Time, 1)
	l.mu.Lock()
	defer l.mu.Unlock()
	if n <= 0 || n >= len(l.answers) {
		return ch
	}
	if l.answers[n] > 0 {
		ch <- l.first[n]
		return ch
	}
	l.waiters[n] = ch
	return ch
}

// Record counts one message the fake LINE API accepted (fit for LineAPI.Observe).
func (l *Ledger) Record(s fakeline.Sent) {
	n, ok := 0, false
	for _, m := range s.Messages {
		for _, t := range m.Texts() {
			if k, found := Marker(t); found {
				n, ok = k, true
			}
		}
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	if !ok || n <= 0 || n >= len(l.answers) {
		l.unattributed++
		return
	}
	l.answers[n]++
	if l.answers[n] > 1 {
		return
	}
	l.first[n] = s.At
	if ch := l.waiters[n]; ch != nil {
		ch <- s.At
		l.waiters[n] = nil
	}
}

// Tally is the outcome for the messages in sent (the ones the webhook acknowledged).
type Tally struct {
	// Answered got at least one answer, Lost none; Duplicated counts the answers beyond the
	// first; Unattributed are answers that name no message sent.
	Answered, Lost, Duplicated, Unattributed int
}

// Tally counts the answers of the messages sent.
func (l *Ledger) Tally(sent []int) Tally {
	l.mu.Lock()
	defer l.mu.Unlock()
	t := Tally{Unattributed: l.unattributed}
	for _, n := range sent {
		switch c := l.answers[n]; {
		case c == 0:
			t.Lost++
		default:
			t.Answered++
			t.Duplicated += c - 1
		}
	}
	// Answers to messages the webhook refused are answers nobody should have got.
	acked := make(map[int]bool, len(sent))
	for _, n := range sent {
		acked[n] = true
	}
	for n, c := range l.answers {
		if c > 0 && !acked[n] {
			t.Unattributed += c
		}
	}
	return t
}
