package llm

import (
	"context"
	"errors"
	"testing"
	"time"
)

func oneTurnRunner(t *testing.T) *Runner {
	t.Helper()
	r, err := NewRunner(Config{Provider: ProviderOllama, Model: "chat-v1:latest", MaxParallel: 1, RetryMax: 2},
		WithSleep(func(context.Context, time.Duration) error { return nil }))
	if err != nil {
		t.Fatal(err)
	}
	return r
}

// answered is an attempt that succeeds.
func answered(context.Context, Request) (Answer, error) { return Answer{Text: "ok"}, nil }

// Each attempt gives its turn back, however it ends: a call after a panicking attempt and one
// after retried failures still get one.
func TestTurnsComeBackHoweverAnAttemptEnds(t *testing.T) {
	r := oneTurnRunner(t)
	func() {
		defer func() {
			if recover() == nil {
				t.Fatal("the attempt's panic did not reach the caller")
			}
		}()
		_, _ = r.Run(context.Background(), Request{}, func(context.Context, Request) (Answer, error) { panic("attempt") })
	}()
	// Bounded, so a turn that was never given back fails the test instead of hanging it.
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	failures := 0
	resp, err := r.Run(ctx, Request{}, func(context.Context, Request) (Answer, error) {
		if failures < 2 {
			failures++
			return Answer{}, &statusError{status: 503, msg: "busy"}
		}
		return Answer{Text: "ok"}, nil
	})
	if err != nil || resp.Attempts != 3 {
		t.Fatalf("call after a panic: %+v, %v; want an answer after 3 attempts", resp, err)
	}
	if _, err := r.Run(ctx, Request{}, answered); err != nil {
		t.Fatalf("call after retried failures: %v", err)
	}
}

// A caller that has left makes no attempt, even with a turn free.
func TestNoAttemptForACallerThatLeft(t *testing.T) {
	r := oneTurnRunner(t)
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	calls := 0
	_, err := r.Run(ctx, Request{}, func(context.Context, Request) (Answer, error) { calls++; return Answer{}, nil })
	if err == nil || calls != 0 || Attempts(err) != 0 || !errors.Is(err, context.Canceled) {
		t.Fatalf("err %v, attempts %d, calls %d; want context.Canceled and none", err, Attempts(err), calls)
	}
}
