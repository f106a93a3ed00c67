package channel

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"testing"

	"go.opentelemetry.io/otel/baggage"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/trace"

	"github.com/picoclaw-suite/picoclaw/pkg/chatlink"
	"github.com/picoclaw-suite/picoclaw/pkg/inbox"
)

type memStore struct {
	events []inbox.Event
	err    error
}

func (m *memStore) Append(_ context.Context, evs ...inbox.Event) (inbox.Result, error) {
	if m.err != nil {
		return inbox.Result{}, m.err
	}
	m.events = append(m.events, evs...)
	return inbox.Result{Stored: len(evs)}, nil
}

type fixedJobs struct {
	id  string
	err error
}

func (f fixedJobs) Next(context.Context) (string, error) { return f.id, f.err }

var prop = propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})

// TestIngestTraceAndJobID: a message gets a job id and a trace of its own, a press continues its
// button's trace with the pressed job, anything else follows the request; all in one Append.
func TestIngestTraceAndJobID(t *testing.T) {
	const buttonTrace = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	store := &memStore{}
	tp := sdktrace.NewTracerProvider()
	g := NewIngester("fake", store, fixedJobs{id: "job_20261121_042"}, slog.New(slog.DiscardHandler), tp, "gateway-fake", prop)
	ctx, req := tp.Tracer("test").Start(context.Background(), "request")
	defer req.End()
	res, err := g.Store(ctx,
		Incoming{ID: "m", Key: "c", Payload: []byte("1"), StartsJob: true},
		Incoming{ID: "p", Key: "c", Payload: []byte("2"), Action: &chatlink.Action{Kind: chatlink.ActionApprove, JobID: "job_20261121_007", Trace: buttonTrace}},
		Incoming{ID: "o", Key: "c", Payload: []byte("3")})
	if err != nil || res.Stored != 3 || len(store.events) != 3 {
		t.Fatalf("stored %+v %v", res, err)
	}
	read := func(i int) (string, string) {
		c := prop.Extract(context.Background(), propagation.MapCarrier(store.events[i].Meta))
		return trace.SpanContextFromContext(c).TraceID().String(), baggage.FromContext(c).Member("job_id").Value()
	}
	reqTrace := req.SpanContext().TraceID().String()
	if tr, job := read(0); tr == reqTrace || job != "job_20261121_042" {
		t.Errorf("message: trace %s job %q", tr, job)
	}
	if tr, job := read(1); tr != "4bf92f3577b34da6a3ce929d0e0e4736" || job != "job_20261121_007" {
		t.Errorf("press: trace %s job %q", tr, job)
	}
	if tr, job := read(2); tr != reqTrace || job != "" {
		t.Errorf("other: trace %s job %q", tr, job)
	}

	failing := NewIngester("fake", store, fixedJobs{err: errors.New("no randomness")}, slog.New(slog.DiscardHandler), tp, "gateway-fake", prop)
	if _, err := failing.Store(ctx, Incoming{ID: "m2", StartsJob: true}); err == nil || len(store.events) != 3 {
		t.Fatalf("job id failure: %v, %d stored", err, len(store.events))
	}
	down := NewIngester("fake", &memStore{err: errors.New("redis down")}, fixedJobs{id: "job_20261121_043"}, slog.New(slog.DiscardHandler), tp, "gateway-fake", prop)
	if _, err := down.Store(ctx, Incoming{ID: "m3", StartsJob: true}); err == nil {
		t.Fatal("store failure not reported")
	}
}

// TestTypedJobCommandsAndPriorityLane: a typed /approve keeps its job's id (no new job), and
// /auto-approve off and /status get a lane of their own beside the chat's.
func TestTypedJobCommandsAndPriorityLane(t *testing.T) {
	store := &memStore{}
	g := NewIngester("fake", store, fixedJobs{err: errors.New("no new job may be allocated")}, slog.New(slog.DiscardHandler),
		sdktrace.NewTracerProvider(), "gateway-fake", prop)
	for i, text := range []string{"/approve job_20261121_007", "/DENY JOB_20261121_007 too risky", "/pick job_20261121_007 2", "/retry job_20261121_007"} {
		if _, err := g.Store(context.Background(), Incoming{ID: fmt.Sprint("t", i), Key: "c", StartsJob: true, Text: text}); err != nil {
			t.Fatalf("%q: %v", text, err)
		}
		c := prop.Extract(context.Background(), propagation.MapCarrier(store.events[i].Meta))
		if job := baggage.FromContext(c).Member("job_id").Value(); job != "job_20261121_007" {
			t.Errorf("%q: job %q", text, job)
		}
	}
	for text, want := range map[string]string{"/auto-approve off": "c|priority", " /STATUS ": "c|priority", "/status please": "c",
		"/auto-approve on": "c", "hello": "c", "": "c"} {
		if got := PriorityKey("c", text); got != want {
			t.Errorf("%q: key %q, want %q", text, got, want)
		}
	}
}
