package httpapi_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/baggage"
	"go.opentelemetry.io/otel/propagation"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"
	"go.opentelemetry.io/otel/trace"

	"github.com/picoclaw-suite/picoclaw/pkg/channel/channeltest"
	"github.com/picoclaw-suite/picoclaw/pkg/chatlink"
	"github.com/picoclaw-suite/picoclaw/pkg/jobid"
	"github.com/picoclaw-suite/picoclaw/pkg/telemetry"
	"github.com/picoclaw-suite/picoclaw/pkg/testinfra/fakeslack"
	"github.com/picoclaw-suite/picoclaw/services/gateway-slack/internal/domain"
	"github.com/picoclaw-suite/picoclaw/services/gateway-slack/internal/httpapi"
)

const (
	secret    = "events-test-secret"
	user      = "UEVENTS01"
	buttonTP  = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	buttonTID = "4bf92f3577b34da6a3ce929d0e0e4736"
	pressed   = "job_20261121_007"
)

func signed(ctx context.Context, path, contentType string, body []byte) *http.Request {
	req := httptest.NewRequest(http.MethodPost, path, bytes.NewReader(body)).WithContext(ctx)
	now := time.Now().Unix()
	req.Header.Set("Content-Type", contentType)
	req.Header.Set("X-Slack-Request-Timestamp", strconv.FormatInt(now, 10))
	req.Header.Set("X-Slack-Signature", fakeslack.Sign(secret, now, body))
	return req
}

func press(value string) []byte {
	return fakeslack.BlockAction(user, "C1", "1700000000.000200", "1700000000.000100", "承認", "trig-"+value[len(value)-4:], "approve", value)
}

// TestEventTraceAndJobID: a message gets its JobID at the webhook and a trace of its own, linked
// to the request; a press continues the trace its button carries with the pressed job's id.
func TestEventTraceAndJobID(t *testing.T) {
	const allocated = "job_20261121_042"
	cases := []struct {
		name, path, contentType string
		body                    []byte
		wantJob, wantTrace      string // wantTrace "" = a new trace
	}{
		{"mention starts a job", "/slack/events", "application/json",
			fakeslack.EventBody("EvT1", fakeslack.Mention(user, "C1", "1700000000.000100", "", "やあ")), allocated, ""},
		{"press continues the button's trace", "/slack/interactive", "application/x-www-form-urlencoded",
			press(domain.ButtonValue(domain.Action{Kind: chatlink.ActionApprove, JobID: pressed, Trace: buttonTP})), pressed, buttonTID},
		{"press without a trace starts one", "/slack/interactive", "application/x-www-form-urlencoded",
			press(domain.ButtonValue(domain.Action{Kind: chatlink.ActionApprove, JobID: pressed})), pressed, ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rec := tracetest.NewSpanRecorder()
			tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
			store := &channeltest.MemStore{}
			h := httpapi.New(secret, channeltest.Ingester("slack", store, channeltest.FixedJobs{ID: allocated}, tp), func() string { return fakeslack.BotUserID }, slog.New(slog.DiscardHandler))
			ctx, reqSpan := tp.Tracer("test").Start(context.Background(), "request")
			w := httptest.NewRecorder()
			if tc.path == "/slack/events" {
				h.Events(w, signed(ctx, tc.path, tc.contentType, tc.body))
			} else {
				h.Interactive(w, signed(ctx, tc.path, tc.contentType, tc.body))
			}
			reqSpan.End()
			if w.Code != http.StatusOK || len(store.Events) != 1 {
				t.Fatalf("status %d %s, %d events stored", w.Code, w.Body, len(store.Events))
			}
			ectx := telemetry.Propagator().Extract(context.Background(), propagation.MapCarrier(store.Events[0].Meta))
			sc := trace.SpanContextFromContext(ectx)
			if job := baggage.FromContext(ectx).Member(jobid.BaggageKey).Value(); job != tc.wantJob {
				t.Errorf("baggage job_id %q, want %q", job, tc.wantJob)
			}
			if tc.wantTrace == "" && (!sc.IsValid() || sc.TraceID() == reqSpan.SpanContext().TraceID()) {
				t.Errorf("trace %s, want a new one", sc.TraceID())
			}
			if tc.wantTrace != "" && sc.TraceID().String() != tc.wantTrace {
				t.Errorf("trace %s, want %s", sc.TraceID(), tc.wantTrace)
			}
			ended := rec.Ended()
			if len(ended) != 2 || ended[0].Name() != "slack.receive" || ended[0].SpanContext().SpanID() != sc.SpanID() ||
				len(ended[0].Links()) != 1 || ended[0].Links()[0].SpanContext.SpanID() != reqSpan.SpanContext().SpanID() {
				t.Fatalf("spans %v", ended)
			}
		})
	}
}

func TestJobIDFailureIsRetried(t *testing.T) {
	store := &channeltest.MemStore{}
	h := httpapi.New(secret, channeltest.Ingester("slack", store, channeltest.FixedJobs{Err: errors.New("no randomness")}, sdktrace.NewTracerProvider()), func() string { return fakeslack.BotUserID }, slog.New(slog.DiscardHandler))
	w := httptest.NewRecorder()
	h.Events(w, signed(context.Background(), "/slack/events", "application/json",
		fakeslack.EventBody("EvT2", fakeslack.Mention(user, "C1", "1700000000.000300", "", "やあ"))))
	if w.Code != http.StatusServiceUnavailable || len(store.Events) != 0 || !strings.Contains(w.Body.String(), `"code":"store_unavailable"`) {
		t.Fatalf("status %d, %d events stored", w.Code, len(store.Events))
	}
}

// TestBotsOwnPressIgnored: a button press in the bot's own name is acknowledged (200) and
// stored nowhere, as its own messages are; the same press by a person is kept.
func TestBotsOwnPressIgnored(t *testing.T) {
	value := domain.ButtonValue(domain.Action{Kind: chatlink.ActionApprove, JobID: pressed})
	for _, tc := range []struct {
		presser string
		stored  int
	}{{fakeslack.BotUserID, 0}, {user, 1}} {
		store := &channeltest.MemStore{}
		h := httpapi.New(secret, channeltest.Ingester("slack", store, channeltest.FixedJobs{ID: pressed}, sdktrace.NewTracerProvider()),
			func() string { return fakeslack.BotUserID }, slog.New(slog.DiscardHandler))
		body := fakeslack.BlockAction(tc.presser, "C1", "1700000000.000200", "1700000000.000100", "承認", "trig-own-"+tc.presser, "approve", value)
		w := httptest.NewRecorder()
		h.Interactive(w, signed(context.Background(), "/slack/interactive", "application/x-www-form-urlencoded", body))
		if w.Code != http.StatusOK || len(store.Events) != tc.stored {
			t.Errorf("press by %s: status %d, %d events stored, want 200 and %d", tc.presser, w.Code, len(store.Events), tc.stored)
		}
	}
}
