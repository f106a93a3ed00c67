package channel

import (
	"context"
	"fmt"
	"log/slog"
	"net/http"
	"regexp"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"github.com/picoclaw-suite/picoclaw/pkg/chatlink"
	"github.com/picoclaw-suite/picoclaw/pkg/inbox"
	"github.com/picoclaw-suite/picoclaw/pkg/jobid"
)

// Appender stores events (inbox.Store).
type Appender interface {
	Append(ctx context.Context, events ...inbox.Event) (inbox.Result, error)
}

// JobIDs allocates JobIDs (jobid.Allocator on the suite's Redis, shared with chat-mio).
type JobIDs interface {
	Next(ctx context.Context) (string, error)
}

// Incoming is one verified inbound event, ready to be stored.
type Incoming struct {
	// ID deduplicates (the channel's event id); Key orders (one chat's events run in order).
	ID, Key string
	// Payload is the channel's stored form, read back by Channel.Decode.
	Payload []byte
	// StartsJob is set for a message: it starts a job of its own, unless Text is a command
	// about an existing job (/approve job_…): that keeps its job's id.
	StartsJob bool
	// Text is a message's text, when it has one: it picks the lane (see PriorityKey) and the
	// job of a typed job command.
	Text string
	// Action is a pressed button: its processing continues the trace the button carries.
	Action *chatlink.Action
}

// Ingester is the inbound side shared by the channels' webhooks: it gives every event the trace
// context it is processed in and stores the events durably (deduplicated); a webhook answers
// success only once Store returned nil.
type Ingester struct {
	name   string
	store  Appender
	jobs   JobIDs
	log    *slog.Logger
	tracer trace.Tracer
	prop   propagation.TextMapPropagator
}

// NewIngester wires an ingester for the channel name (span and log prefix); tracer names the
// spans' instrumentation scope.
func NewIngester(name string, store Appender, jobs JobIDs, log *slog.Logger, tp trace.TracerProvider, tracer string, prop propagation.TextMapPropagator) *Ingester {
	return &Ingester{name: name, store: store, jobs: jobs, log: log, tracer: tp.Tracer(tracer), prop: prop}
}

// Store stores events; on error nothing may be acknowledged to the sender (it will redeliver,
// and what was stored is deduplicated then). Errors are logged here.
func (g *Ingester) Store(ctx context.Context, in ...Incoming) (inbox.Result, error) {
	events := make([]inbox.Event, 0, len(in))
	for _, e := range in {
		meta, err := g.eventMeta(ctx, e)
		if err != nil {
			g.log.ErrorContext(ctx, g.name+".jobid_failed", slog.String("event_id", e.ID), slog.Any("error", err))
			return inbox.Result{}, err
		}
		events = append(events, inbox.Event{ID: e.ID, Key: PriorityKey(e.Key, e.Text), Payload: e.Payload, Meta: meta})
	}
	res, err := g.store.Append(ctx, events...)
	if err != nil {
		g.log.ErrorContext(ctx, g.name+".store_failed", slog.Int("events", len(events)), slog.Any("error", err))
		return res, err
	}
	return res, nil
}

// eventMeta is the trace context an event is processed in. A message starts a job: its JobID is
// allocated here, before any downstream call, and it gets a trace of its own (linked to this
// request), so one trace covers one job. A button press continues the trace its button carries,
// with the pressed job's id. Other events follow this request's trace.
func (g *Ingester) eventMeta(ctx context.Context, e Incoming) (map[string]string, error) {
	meta := propagation.MapCarrier{}
	opts := []trace.SpanStartOption{trace.WithLinks(trace.LinkFromContext(ctx)),
		trace.WithAttributes(attribute.String(g.name+".event_id", e.ID))}
	var id string
	parent := ctx
	switch {
	case e.StartsJob && commandJob(e.Text) != "":
		// A typed decision about a job is part of that job, not a new one.
		id = commandJob(e.Text)
		opts = append(opts, trace.WithNewRoot())
	case e.StartsJob:
		next, err := g.jobs.Next(ctx)
		if err != nil {
			return nil, fmt.Errorf("allocate job id: %w", err)
		}
		id = next
		opts = append(opts, trace.WithNewRoot())
	case e.Action != nil && jobid.Valid(e.Action.JobID):
		id = e.Action.JobID
		parent = propagation.TraceContext{}.Extract(ctx, propagation.MapCarrier{"traceparent": e.Action.Trace})
		if !trace.SpanContextFromContext(parent).IsRemote() {
			opts = append(opts, trace.WithNewRoot())
		}
	default:
		g.prop.Inject(ctx, meta)
		return meta, nil
	}
	jctx, span := g.tracer.Start(jobid.WithJobID(parent, id), g.name+".receive", opts...)
	g.prop.Inject(jctx, meta)
	span.End()
	return meta, nil
}

// priorityCommands are answered ahead of a running turn of the same chat: switching
// Auto-Approve off and asking for the status must not wait behind a long answer.
var priorityCommands = regexp.MustCompile(`(?i)^\s*/(auto-approve\s+off|status)\s*$`)

// PriorityKey is the ordering key of an event: the chat's own key, or for a priority command
// a lane of its own beside it.
func PriorityKey(key, text string) string {
	if priorityCommands.MatchString(text) {
		return key + "|priority"
	}
	return key
}

// jobCommand is a typed command that names a job as its first argument.
var jobCommand = regexp.MustCompile(`(?i)^\s*/(approve|deny|pick|retry)\s+(job_[0-9]{8}_(?:[0-9]{3,}|[0-9a-f]{8}))\b`)

// commandJob is the job a typed job command names, or "".
func commandJob(text string) string {
	m := jobCommand.FindStringSubmatch(text)
	if m == nil {
		return ""
	}
	return strings.ToLower(m[2])
}

// NotStored answers a webhook whose events could not be stored: 503 with a stable code and no
// detail of why (the log has it), so the channel delivers the events again — LINE and Slack both
// redeliver on a 5xx — and what was stored meanwhile is deduplicated then.
func NotStored(w http.ResponseWriter) {
	w.Header().Set("Content-Type", "application/json")
	w.Header().Set("Retry-After", "1")
	w.WriteHeader(http.StatusServiceUnavailable)
	_, _ = w.Write([]byte(`{"code":"store_unavailable","message":"the event could not be stored; send it again"}` + "\n"))
}
