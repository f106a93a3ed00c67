package faults

import (
	"fmt"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/picoclaw-suite/picoclaw/pkg/testinfra/fakeline"

	"github.com/picoclaw-suite/picoclaw/bench/internal/suite"
)

// Plan is the traffic of a run: messages 1..Messages over Chats one-to-one LINE chats, message
// n being number Seq(n) of chat Chat(n). A message's text carries n (suite.Marked), and the
// fake Ollama repeats it in its answer, so every message the fake LINE API accepts names the
// message it answers — and with it the chat and the place in that chat.
type Plan struct {
	Messages, Chats int
}

// Chat is the chat (0..Chats-1) message n is sent in.
func (p Plan) Chat(n int) int { return (n - 1) % p.Chats }

// Seq is message n's place in its chat, from 1.
func (p Plan) Seq(n int) int { return (n-1)/p.Chats + 1 }

// User is the LINE user of chat c.
func (p Plan) User(c int) string { return fmt.Sprintf("Ufaults%026d", c) }

// Users are the LINE users of every chat, for the allowlist.
func (p Plan) Users() []string {
	out := make([]string, p.Chats)
	for c := range out {
		out[c] = p.User(c)
	}
	return out
}

// Text is message n's text: plain conversation (the router's cheap signals route it to CHAT)
// marked with n.
func (p Plan) Text(n int) string {
	return suite.Marked("今日はいい天気だね、散歩に行こうかな", n)
}

// Answer is the answer message n should get, exactly.
func (p Plan) Answer(n int) string { return suite.Marked(suite.ChatAnswer, n) }

// ReplyToken is message n's reply token; EventID its webhook event id.
func (p Plan) ReplyToken(n int) string { return fmt.Sprintf("faults-reply-%08d", n) }

// EventID is message n's webhook event id (stable across redeliveries).
func (p Plan) EventID(n int) string { return fmt.Sprintf("01FAULTS%018d", n) }

// received is one request the fake LINE API accepted.
type received struct {
	kind, to string
	// n is the message it names (0: none), chat the chat it went to (-1: none of the plan's),
	// token the message whose reply token a reply used (0: a push).
	n, chat, token int
	text           string
	at             time.Time
}

// Checker keeps everything the fake LINE API accepts and judges it against the plan.
type Checker struct {
	plan   Plan
	tokens map[string]int // reply token → message
	users  map[string]int // user → chat

	mu   sync.Mutex
	seen []received
}

// NewChecker expects the plan's messages.
func NewChecker(p Plan) *Checker {
	c := &Checker{plan: p, tokens: map[string]int{}, users: map[string]int{}}
	for n := 1; n <= p.Messages; n++ {
		c.tokens[p.ReplyToken(n)] = n
	}
	for ch := range p.Chats {
		c.users[p.User(ch)] = ch
	}
	return c
}

// Record keeps one accepted reply or push (fit for suite.LineAPI.Observe: quick, and it does
// not call the server).
func (c *Checker) Record(s fakeline.Sent) {
	var texts []string
	for _, m := range s.Messages {
		texts = append(texts, m.Texts()...)
	}
	r := received{kind: s.Kind, to: s.To, chat: -1, text: strings.Join(texts, "\n"), at: s.At}
	if k, ok := suite.Marker(r.text); ok && k >= 1 && k <= c.plan.Messages {
		r.n = k
	}
	switch {
	case s.Kind == "reply":
		if n, ok := c.tokens[s.ReplyToken]; ok {
			r.chat, r.token = c.plan.Chat(n), n
		}
	default:
		if ch, ok := c.users[s.To]; ok {
			r.chat = ch
		}
	}
	c.mu.Lock()
	c.seen = append(c.seen, r)
	c.mu.Unlock()
}

// Received is how many requests the fake accepted so far.
func (c *Checker) Received() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.seen)
}

// Answered reports how many of the messages in acked have an answer so far.
func (c *Checker) Answered(acked []bool) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	got := map[int]bool{}
	for _, r := range c.seen {
		if r.n > 0 && acked[r.n] {
			got[r.n] = true
		}
	}
	return len(got)
}

// FirstAnswers is when each message first got an answer (zero: not yet).
func (c *Checker) FirstAnswers() []time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	out := make([]time.Time, c.plan.Messages+1)
	for _, r := range c.seen {
		if r.n > 0 && out[r.n].IsZero() {
			out[r.n] = r.at
		}
	}
	return out
}

// maxSamples bounds the examples a tally keeps of each problem.
const maxSamples = 10

// Tally is the judgement of a run.
type Tally struct {
	// Sent counts the messages the webhook acknowledged; Unacked those it never did (the
	// sender gave up on them): they are not expected to be answered.
	Sent    int `json:"sent"`
	Unacked int `json:"unacked"`
	// Answered got an answer; Lost did not; Duplicated counts answers beyond the first.
	Answered   int `json:"answered"`
	Lost       int `json:"lost"`
	Duplicated int `json:"duplicated"`
	// OutOfOrderChats are chats whose answers did not come in the order of their messages;
	// Inversions the answers that came after the answer to a later message of their chat.
	OutOfOrderChats int `json:"out_of_order_chats"`
	Inversions      int `json:"inversions"`
	// ErrorReplies are messages to the plan's chats other than an exact answer: an apology,
	// an error, an answer with a note added (e.g. "memory unavailable"). Unexpected counts
	// messages to anyone else, or answers to messages never acknowledged.
	ErrorReplies int `json:"error_replies"`
	Unexpected   int `json:"unexpected"`
	// Replies and Pushes split the accepted requests by LINE API.
	Replies int `json:"replies"`
	Pushes  int `json:"pushes"`

	LostSample       []int    `json:"lost_sample,omitempty"`
	DuplicatedSample []int    `json:"duplicated_sample,omitempty"`
	OutOfOrderSample []string `json:"out_of_order_sample,omitempty"`
	ErrorSample      []string `json:"error_sample,omitempty"`
	UnexpectedSample []string `json:"unexpected_sample,omitempty"`
}

// OK is true when nothing was lost, repeated, reordered or answered with an error.
func (t Tally) OK() bool {
	return t.Lost == 0 && t.Duplicated == 0 && t.OutOfOrderChats == 0 && t.ErrorReplies == 0 && t.Unexpected == 0 && t.Unacked == 0
}

// Tally judges what the fake accepted; acked[n] tells whether the webhook acknowledged
// message n.
func (c *Checker) Tally(acked []bool) Tally {
	c.mu.Lock()
	seen := slices.Clone(c.seen)
	c.mu.Unlock()
	var t Tally
	for n := 1; n <= c.plan.Messages; n++ {
		if acked[n] {
			t.Sent++
		} else {
			t.Unacked++
		}
	}
	answers := make([]int, c.plan.Messages+1)
	// order[chat] is the place of each first answer in the chat, in arrival order.
	order := make([][]int, c.plan.Chats)
	for _, r := range seen {
		if r.kind == "reply" {
			t.Replies++
		} else {
			t.Pushes++
		}
		switch {
		// To someone outside the plan, about a message never acknowledged, in another chat
		// than the message's, or with another message's reply token.
		case r.chat < 0 || (r.n > 0 && !acked[r.n]) || (r.n > 0 && c.plan.Chat(r.n) != r.chat) ||
			(r.n > 0 && r.token > 0 && r.token != r.n):
			t.Unexpected++
			t.UnexpectedSample = sample(t.UnexpectedSample, fmt.Sprintf("%s to %q: %s", r.kind, r.to, clip(r.text)))
			continue
		case r.n == 0 || r.text != c.plan.Answer(r.n):
			t.ErrorReplies++
			t.ErrorSample = sample(t.ErrorSample, fmt.Sprintf("chat %d, %s: %s", r.chat, r.kind, clip(r.text)))
		}
		if r.n == 0 {
			continue
		}
		answers[r.n]++
		if answers[r.n] == 1 {
			order[r.chat] = append(order[r.chat], c.plan.Seq(r.n))
		}
	}
	for n := 1; n <= c.plan.Messages; n++ {
		if !acked[n] {
			continue
		}
		switch a := answers[n]; {
		case a == 0:
			t.Lost++
			if len(t.LostSample) < maxSamples {
				t.LostSample = append(t.LostSample, n)
			}
		default:
			t.Answered++
			t.Duplicated += a - 1
			if a > 1 && len(t.DuplicatedSample) < maxSamples {
				t.DuplicatedSample = append(t.DuplicatedSample, n)
			}
		}
	}
	for ch, seqs := range order {
		inv, highest := 0, 0
		for _, s := range seqs {
			if s < highest {
				inv++
			}
			highest = max(highest, s)
		}
		if inv > 0 {
			t.OutOfOrderChats++
			t.Inversions += inv
			t.OutOfOrderSample = sample(t.OutOfOrderSample, fmt.Sprintf("chat %d: %v", ch, seqs))
		}
	}
	return t
}

func sample(s []string, v string) []string {
	if len(s) < maxSamples {
		s = append(s, v)
	}
	return s
}

func clip(s string) string {
	const n = 160
	if r := []rune(s); len(r) > n {
		return string(r[:n]) + "…"
	}
	return s
}
