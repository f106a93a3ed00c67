package app

import (
	"context"
	"encoding/json"
	"log/slog"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"

	"github.com/picoclaw-suite/picoclaw/pkg/jobid"
	"github.com/picoclaw-suite/picoclaw/pkg/telemetry"
	"github.com/picoclaw-suite/picoclaw/services/chat-mio/internal/domain"
)

// retryRecord is what /retry needs of a coder request: who asked, what, and which order.
type retryRecord struct {
	SessionID string `json:"session_id"`
	Text      string `json:"text"`
	Order     string `json:"order,omitempty"`
	Route     string `json:"route"`
}

// retryKey names a job's retry record in the options store.
func retryKey(id string) string { return id + ":retry" }

// keepRetry remembers a coder request so /retry can ask the same order again later (for
// example after the executor refused the job because a file changed).
func (a *App) keepRetry(ctx context.Context, t *turn, text, order, route string) {
	if t.sess.Degraded {
		return
	}
	data, err := json.Marshal(retryRecord{SessionID: t.sess.ID, Text: text, Order: order, Route: route})
	if err == nil {
		err = a.store.SaveOptions(ctx, retryKey(t.jobID), data, a.cfg.OptionsTTL)
	}
	if err != nil {
		a.log.WarnContext(ctx, "chat.retry_not_kept", slog.Any("error", err))
	}
}

// retry asks the order of an earlier coder job of this conversation again, under a new job,
// with the workspace as it is now (the coder reads it afresh).
func (a *App) retry(ctx context.Context, t *turn, id string) {
	rec, err := a.loadRetry(ctx, id)
	if err != nil || rec.SessionID != t.sess.ID {
		// Another conversation's request is not shown or repeated here.
		a.log.InfoContext(ctx, "chat.retry_unknown", slog.String("retry_of", id), slog.Any("error", err))
		t.result.JobId = id
		t.say(domain.T(t.loc, domain.MsgRetryUnknown, id))
		return
	}
	ctx, span, ok := a.followUp(ctx, t, "chat.retry", attribute.String("retry_of", id))
	if !ok {
		return
	}
	defer span.End()
	next := t.jobID
	who := rec.Order
	if who == "" {
		who = rec.Route
	}
	a.log.InfoContext(ctx, "chat.retry", slog.String("retry_of", id), slog.String("order", rec.Order), slog.String("route", rec.Route))
	t.say(domain.T(t.loc, domain.MsgRetrying, id, who, next))
	a.converse(ctx, t, domain.RetryText(rec.Text, rec.Order, rec.Route))
}

// loadRetry reads the request kept for /retry of job id.
func (a *App) loadRetry(ctx context.Context, id string) (retryRecord, error) {
	var rec retryRecord
	data, err := a.store.LoadOptions(ctx, retryKey(id))
	if err == nil {
		err = json.Unmarshal(data, &rec)
	}
	return rec, err
}

// followUp makes the rest of the turn a new job that follows an earlier one (/retry, a cost
// confirmation's go-ahead): a new JobID, in a trace of its own linked to the old job's (where
// this command ran) and to the request that asked for it. ok is false, and the user told, when
// no JobID could be had.
func (a *App) followUp(ctx context.Context, t *turn, name string, attrs ...attribute.KeyValue) (context.Context, trace.Span, bool) {
	next, err := a.allocate(ctx)
	if err != nil {
		a.log.ErrorContext(ctx, "chat.no_job_id", slog.String("for", name), slog.Any("error", err))
		t.say(domain.T(t.loc, domain.MsgPeerFailed, "job id"))
		return ctx, nil, false
	}
	links := []trace.Link{trace.LinkFromContext(ctx)}
	if t.request.IsValid() {
		links = append(links, trace.Link{SpanContext: t.request})
	}
	ctx, span := a.cfg.Tracer.Start(jobid.WithJobID(ctx, next), name, trace.WithNewRoot(), trace.WithLinks(links...),
		trace.WithAttributes(attrs...))
	t.jobID, t.result.JobId, t.result.TraceParent = next, next, telemetry.TraceParent(ctx)
	return ctx, span, true
}
