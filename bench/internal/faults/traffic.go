package faults

import (
	"bytes"
	"context"
	"io"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/picoclaw-suite/picoclaw/pkg/testinfra/fakeline"

	"github.com/picoclaw-suite/picoclaw/bench/internal/suite"
)

// sender sends the plan's messages to the LINE webhook as LINE does: signed, one chat's
// messages one after another, and a message whose delivery failed (an error, a timeout, a
// status other than 200) delivered again with the same event id and isRedelivery set, until
// it is acknowledged.
type sender struct {
	plan   Plan
	url    string
	client *http.Client
	line   *suite.LineAPI
	// start and interval schedule message n at start + (n-1)·interval; a chat whose previous
	// message is still being delivered sends the next one as soon as that is acknowledged.
	start    time.Time
	interval time.Duration

	mu sync.Mutex
	// acked[n] tells whether message n was acknowledged; first[n] is its first attempt.
	acked []bool
	first []time.Time
	// retries counts deliveries beyond the first; sent the messages whose first attempt went.
	retries, sent atomic.Int64
}

func newSender(p Plan, url string, line *suite.LineAPI, start time.Time, interval time.Duration) *sender {
	return &sender{plan: p, url: url, line: line, start: start, interval: interval,
		// A connection per delivery, as LINE's webhook deliveries come: a kept-alive connection
		// would pin most webhooks to one replica behind the balancer.
		client: &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{DisableKeepAlives: true}},
		acked:  make([]bool, p.Messages+1), first: make([]time.Time, p.Messages+1)}
}

// run sends every message, or stops at ctx's end (messages not acknowledged by then stay so).
func (s *sender) run(ctx context.Context) {
	var wg sync.WaitGroup
	for c := range s.plan.Chats {
		wg.Go(func() { s.chat(ctx, c) })
	}
	wg.Wait()
}

func (s *sender) chat(ctx context.Context, c int) {
	for n := c + 1; n <= s.plan.Messages; n += s.plan.Chats {
		if !sleepUntil(ctx, s.start.Add(time.Duration(n-1)*s.interval)) {
			return
		}
		if !s.deliver(ctx, n) {
			return
		}
	}
}

// deliver posts message n until the webhook acknowledges it; false when ctx ended first.
func (s *sender) deliver(ctx context.Context, n int) bool {
	token := s.plan.ReplyToken(n)
	s.line.IssueReplyToken(token)
	at := time.Now()
	s.mu.Lock()
	s.first[n] = at
	s.mu.Unlock()
	s.sent.Add(1)
	wait := 250 * time.Millisecond
	for attempt := 1; ; attempt++ {
		body := fakeline.Body(fakeline.TextEvent(s.plan.EventID(n), s.plan.User(s.plan.Chat(n)), "", token, s.plan.Text(n),
			at.UnixMilli(), attempt > 1))
		if s.post(ctx, body) {
			s.mu.Lock()
			s.acked[n] = true
			s.mu.Unlock()
			return true
		}
		if ctx.Err() != nil {
			return false
		}
		s.retries.Add(1)
		if !sleepUntil(ctx, time.Now().Add(wait)) {
			return false
		}
		wait = min(2*wait, 5*time.Second)
	}
}

func (s *sender) post(ctx context.Context, body []byte) bool {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, s.url, bytes.NewReader(body))
	if err != nil {
		return false
	}
	req.Header.Set("Content-Type", "application/json; charset=utf-8")
	req.Header.Set("X-Line-Signature", suite.Sign(body))
	res, err := s.client.Do(req)
	if err != nil {
		return false
	}
	_, _ = io.Copy(io.Discard, res.Body)
	res.Body.Close()
	return res.StatusCode == http.StatusOK
}

// state copies which messages were acknowledged and when each was first sent.
func (s *sender) state() (acked []bool, first []time.Time) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]bool(nil), s.acked...), append([]time.Time(nil), s.first...)
}

// sleepUntil waits until t; false when ctx ends first.
func sleepUntil(ctx context.Context, t time.Time) bool {
	d := time.Until(t)
	if d <= 0 {
		return ctx.Err() == nil
	}
	timer := time.NewTimer(d)
	defer timer.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-timer.C:
		return true
	}
}
