package channeltest

import (
	"context"
	"log/slog"

	"go.opentelemetry.io/otel/trace"

	"github.com/picoclaw-suite/picoclaw/pkg/channel"
	"github.com/picoclaw-suite/picoclaw/pkg/inbox"
	"github.com/picoclaw-suite/picoclaw/pkg/telemetry"
)

// MemStore is an inbox store in memory, for webhook tests.
type MemStore struct{ Events []inbox.Event }

// Append stores events.
func (m *MemStore) Append(_ context.Context, events ...inbox.Event) (inbox.Result, error) {
	m.Events = append(m.Events, events...)
	return inbox.Result{StreamIDs: make([]string, len(events)), Stored: len(events)}, nil
}

// FixedJobs allocates ID every time, or fails with Err.
type FixedJobs struct {
	ID  string
	Err error
}

// Next returns the fixed id.
func (f FixedJobs) Next(context.Context) (string, error) { return f.ID, f.Err }

// Ingester is the ingester of a channel's webhook under test: events go to store, job ids come
// from jobs, spans to tp, logs nowhere.
func Ingester(name string, store channel.Appender, jobs channel.JobIDs, tp trace.TracerProvider) *channel.Ingester {
	return channel.NewIngester(name, store, jobs, slog.New(slog.DiscardHandler), tp, "gateway-"+name, telemetry.Propagator())
}
