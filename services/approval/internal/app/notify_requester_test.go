package app_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/picoclaw-suite/picoclaw/pkg/telemetry"
	"github.com/picoclaw-suite/picoclaw/services/approval/internal/app"
	"github.com/picoclaw-suite/picoclaw/services/approval/internal/domain"
)

// pushed is one push the fake gateway saw.
type pushed struct{ session, job, retryKey, text string }

// fakeGateways is the push path: it records every attempt and fails the first failures ones
// with err.
type fakeGateways struct {
	mu       sync.Mutex
	attempts []pushed
	failures int
	err      error
}

func (f *fakeGateways) Push(_ context.Context, session, job, retryKey, text string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.attempts = append(f.attempts, pushed{session, job, retryKey, text})
	if f.failures != 0 {
		f.failures--
		return f.err
	}
	return nil
}

func (f *fakeGateways) seen() []pushed {
	f.mu.Lock()
	defer f.mu.Unlock()
	return append([]pushed(nil), f.attempts...)
}

const requesterChat = "line:U1"

// requestFrom records a pending job asked for in the requester's chat.
func requestFrom(t *testing.T, svc *app.Service, ctx context.Context, id, locale string) {
	t.Helper()
	if _, err := svc.RequestApproval(ctx, app.RequestInput{JobID: id, Patch: docs, SessionID: requesterChat, Channel: "line",
		RequestedBy: owner, Locale: locale}); err != nil {
		t.Fatal(err)
	}
}

func deliver(t *testing.T, svc *app.Service) int {
	t.Helper()
	n, err := svc.DeliverNotices(context.Background())
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// TestRequesterToldOnceOfADecisionMadeElsewhere: a decision made in the requester's own chat is
// answered there; one made in another chat or outside chat (REST, console) is pushed to the
// requester's chat once, in the job's language.
func TestRequesterToldOnceOfADecisionMadeElsewhere(t *testing.T) {
	ctx := context.Background()
	tests := []struct {
		name   string
		locale string
		decide func(*app.Service, string) error
		want   []string // substrings of the one notice; nil: no notice
	}{
		{name: "approved in the requester's chat", decide: func(s *app.Service, id string) error {
			_, err := s.Approve(ctx, id, owner, requesterChat)
			return err
		}},
		{name: "denied in the requester's chat", decide: func(s *app.Service, id string) error {
			_, err := s.Deny(ctx, id, owner, "no", requesterChat)
			return err
		}},
		{name: "approved from another chat", decide: func(s *app.Service, id string) error {
			_, err := s.Approve(ctx, id, owner, "line:Cgroup")
			return err
		}, want: []string{"✅", "が承認しました", "line:U1"}},
		{name: "approved over the REST API, in English", locale: "en", decide: func(s *app.Service, id string) error {
			_, err := s.Approve(ctx, id, owner, "")
			return err
		}, want: []string{"was approved by line:U1", "send /approve"}},
		{name: "denied from another chat with a reason", decide: func(s *app.Service, id string) error {
			_, err := s.Deny(ctx, id, owner, "too broad", "slack:C1:1.0")
			return err
		}, want: []string{"⛔", "が却下しました", "理由: too broad"}},
		{name: "refused approver decides nothing", decide: func(s *app.Service, id string) error {
			_, err := s.Approve(ctx, id, domain.Actor{ID: "U9", Channel: "line"}, "line:Cgroup")
			if !errors.Is(err, domain.ErrPermission) {
				return fmt.Errorf("stranger's approve = %v", err)
			}
			return nil
		}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			gw := &fakeGateways{}
			svc, _, _ := newApp(t, &memGrants{}, app.WithNotifier(gw))
			id := "job_20260301_001"
			requestFrom(t, svc, ctx, id, tc.locale)
			if err := tc.decide(svc, id); err != nil {
				t.Fatal(err)
			}
			deliver(t, svc)
			deliver(t, svc)
			got := gw.seen()
			if tc.want == nil {
				if len(got) != 0 {
					t.Fatalf("pushed %+v, want nothing", got)
				}
				return
			}
			if len(got) != 1 {
				t.Fatalf("pushed %d times, want once: %+v", len(got), got)
			}
			p := got[0]
			if p.session != requesterChat || p.job != id || p.retryKey != id+":decision" {
				t.Errorf("push %+v, want to %s about %s with retry key %s:decision", p, requesterChat, id, id)
			}
			for _, w := range append(tc.want, id) {
				if !strings.Contains(p.text, w) {
					t.Errorf("notice %q lacks %q", p.text, w)
				}
			}
		})
	}
}

// TestRequesterToldOnceOfExpiry: the sweeper's expiry, and an expiry found by a late decision,
// each owe the requester's chat one message.
func TestRequesterToldOnceOfExpiry(t *testing.T) {
	ctx := context.Background()
	gw := &fakeGateways{}
	svc, _, now := newApp(t, &memGrants{}, app.WithNotifier(gw))
	requestFrom(t, svc, ctx, "job_20260301_001", "")
	requestFrom(t, svc, ctx, "job_20260301_002", "")
	*now = now.Add(31 * time.Minute)
	if n, err := svc.Sweep(ctx); err != nil || n != 2 {
		t.Fatalf("Sweep = %d, %v", n, err)
	}
	if n := deliver(t, svc); n != 2 {
		t.Fatalf("delivered %d, want 2", n)
	}
	if _, err := svc.Approve(ctx, "job_20260301_001", owner, "line:Cgroup"); !errors.Is(err, domain.ErrConflict) {
		t.Fatalf("approve after expiry = %v", err)
	}
	deliver(t, svc)
	got := gw.seen()
	if len(got) != 2 {
		t.Fatalf("pushed %+v, want one per job", got)
	}
	for _, p := range got {
		if !strings.Contains(p.text, "期限切れ") || !strings.Contains(p.text, p.job) {
			t.Errorf("expiry notice %q", p.text)
		}
	}

	// A decision that arrives after the expiry but before the sweeper records the expiry itself.
	requestFrom(t, svc, ctx, "job_20260301_003", "en")
	*now = now.Add(31 * time.Minute)
	if _, err := svc.Approve(ctx, "job_20260301_003", owner, requesterChat); !errors.Is(err, domain.ErrExpired) {
		t.Fatalf("late approve = %v", err)
	}
	deliver(t, svc)
	if got := gw.seen(); len(got) != 3 || !strings.Contains(got[2].text, "expired") {
		t.Fatalf("pushed %+v, want the late expiry told in English", got)
	}
}

// TestNoticeDelivery: a transient failure is retried with backoff until it is delivered (once);
// a refusal and an old notice are closed without further attempts.
func TestNoticeDelivery(t *testing.T) {
	ctx := context.Background()
	unavailable := fmt.Errorf("push: %w", domain.ErrUnavailable)
	refused := fmt.Errorf("push: %w: unknown session", domain.ErrNotFound)
	tests := []struct {
		name     string
		failures int
		err      error
		// steps are clock advances; after each, one delivery pass.
		steps    []time.Duration
		attempts int
		sent     bool
	}{
		{name: "delivered at once", steps: []time.Duration{0, time.Hour}, attempts: 1, sent: true},
		{name: "transient failures back off, then deliver once", failures: 2, err: unavailable,
			steps: []time.Duration{0, 0, 4 * time.Second, time.Second, 9 * time.Second, time.Second, time.Hour}, attempts: 3, sent: true},
		{name: "a refusal is not retried", failures: 1, err: refused, steps: []time.Duration{0, time.Hour, 48 * time.Hour}, attempts: 1},
		{name: "given up after a day", failures: -1, err: unavailable,
			steps: []time.Duration{0, 10 * time.Minute, 25 * time.Hour, 10 * time.Minute, time.Hour}, attempts: 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			gw := &fakeGateways{failures: tc.failures, err: tc.err}
			svc, _, now := newApp(t, &memGrants{}, app.WithNotifier(gw))
			requestFrom(t, svc, ctx, "job_20260301_001", "")
			if _, err := svc.Approve(ctx, "job_20260301_001", owner, ""); err != nil {
				t.Fatal(err)
			}
			sent := 0
			for _, d := range tc.steps {
				*now = now.Add(d)
				sent += deliver(t, svc)
			}
			got := gw.seen()
			if len(got) != tc.attempts || (sent == 1) != tc.sent || sent > 1 {
				t.Fatalf("%d attempts, %d delivered; want %d attempts, delivered %v", len(got), sent, tc.attempts, tc.sent)
			}
			for _, p := range got {
				if p.retryKey != got[0].retryKey || p.text != got[0].text {
					t.Errorf("attempts differ: %+v", got)
				}
			}
		})
	}
}

// TestActionsJoinTheJobsTrace: the job keeps the context of the request that created it; a
// decision that arrives in a trace of its own, the sweeper's expiry and the requester notice run
// in the job's trace, linked to what brought them.
func TestActionsJoinTheJobsTrace(t *testing.T) {
	ctx := context.Background()
	rec := tracetest.NewSpanRecorder()
	tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
	tr := tp.Tracer("test")
	gw := &fakeGateways{}
	svc, st, now := newApp(t, &memGrants{}, app.WithTracer(tp), app.WithNotifier(gw))

	reqCtx, req := tr.Start(ctx, "request")
	requestFrom(t, svc, reqCtx, "job_20260301_001", "")
	requestFrom(t, svc, reqCtx, "job_20260301_002", "")
	req.End()
	job, err := st.Get(ctx, "job_20260301_001")
	if err != nil {
		t.Fatal(err)
	}
	if job.TraceParent != telemetry.TraceParent(reqCtx) {
		t.Fatalf("stored trace %q, want the request's %q", job.TraceParent, telemetry.TraceParent(reqCtx))
	}
	jobTrace := req.SpanContext().TraceID()

	restCtx, rest := tr.Start(ctx, "POST /v1/jobs/{id}/approve")
	if _, err := svc.Approve(restCtx, "job_20260301_001", owner, ""); err != nil {
		t.Fatal(err)
	}
	rest.End()
	*now = now.Add(31 * time.Minute)
	if _, err := svc.Sweep(ctx); err != nil {
		t.Fatal(err)
	}
	if n := deliver(t, svc); n != 2 {
		t.Fatalf("delivered %d notices, want 2", n)
	}

	byName := map[string][]sdktrace.ReadOnlySpan{}
	for _, s := range rec.Ended() {
		byName[s.Name()] = append(byName[s.Name()], s)
	}
	one := func(name string) sdktrace.ReadOnlySpan {
		t.Helper()
		if len(byName[name]) != 1 {
			t.Fatalf("%d spans %s, want 1", len(byName[name]), name)
		}
		return byName[name][0]
	}
	linkedTo := func(s sdktrace.ReadOnlySpan, want trace.SpanContext) bool {
		for _, l := range s.Links() {
			if l.SpanContext.SpanID() == want.SpanID() {
				return true
			}
		}
		return false
	}
	approve, sweep, expire := one("approval.approve"), one("approval.sweep"), one("approval.expire")
	if approve.SpanContext().TraceID() != jobTrace || approve.Parent().SpanID() != req.SpanContext().SpanID() || !linkedTo(approve, rest.SpanContext()) {
		t.Errorf("approve: trace %s parent %s links %v; want the job's trace under its request, linked to the REST call",
			approve.SpanContext().TraceID(), approve.Parent().SpanID(), approve.Links())
	}
	if expire.SpanContext().TraceID() != jobTrace || !linkedTo(expire, sweep.SpanContext()) || sweep.SpanContext().TraceID() == jobTrace {
		t.Errorf("expire: trace %s links %v; want the job's trace, linked to the sweep's own trace %s",
			expire.SpanContext().TraceID(), expire.Links(), sweep.SpanContext().TraceID())
	}
	for _, n := range byName["approval.notify_requester"] {
		if n.SpanContext().TraceID() != jobTrace {
			t.Errorf("notice in trace %s, want the job's %s", n.SpanContext().TraceID(), jobTrace)
		}
	}
	if len(byName["approval.notify_requester"]) != 2 {
		t.Errorf("%d notice spans, want 2", len(byName["approval.notify_requester"]))
	}
}
