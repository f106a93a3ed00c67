package httpapi_test

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net/http"
	"net/http/httptest"
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
	"github.com/picoclaw-suite/picoclaw/pkg/testinfra/fakeline"
	"github.com/picoclaw-suite/picoclaw/services/gateway-line/internal/domain"
	"github.com/picoclaw-suite/picoclaw/services/gateway-line/internal/httpapi"
)

const (
	secret    = "webhook-test-secret"
	user      = "Uwebhook000000000000000000000001"
	buttonTP  = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
	buttonTID = "4bf92f3577b34da6a3ce929d0e0e4736"
	pressed   = "job_20261121_007"
)

// serveSigned posts body to the webhook h, signed with the channel secret.
func serveSigned(h http.Handler, body []byte) *httptest.ResponseRecorder {
	req := httptest.NewRequest(http.MethodPost, "/line/webhook", bytes.NewReader(body))
	req.Header.Set("X-Line-Signature", fakeline.Sign(secret, body))
	w := httptest.NewRecorder()
	h.ServeHTTP(w, req)
	return w
}

// metaContext reads an event's stored trace context as the consumer will.
func metaContext(meta map[string]string) (trace.SpanContext, string) {
	ctx := telemetry.Propagator().Extract(context.Background(), propagation.MapCarrier(meta))
	return trace.SpanContextFromContext(ctx), baggage.FromContext(ctx).Member(jobid.BaggageKey).Value()
}

func postback(a domain.Action) string {
	data, _ := domain.EncodePostback(a)
	return data
}

// TestEventTraceAndJobID: a text message gets its JobID at the webhook and a trace of its own,
// linked to the request; a press continues the trace its button carries with the pressed job's
// id; anything else follows the request.
func TestEventTraceAndJobID(t *testing.T) {
	const allocated = "job_20261121_042"
	cases := []struct {
		name       string
		event      fakeline.Event
		wantJob    string
		wantTrace  string // "" = a new trace, "request" = the request's
		wantLinked bool
	}{
		{"text starts a job", fakeline.TextEvent("01EVTEXT", user, "", "", "やあ", time.Now().UnixMilli(), false), allocated, "", true},
		{"press continues the button's trace", fakeline.PostbackEvent("01EVPRESS", user, "",
			postback(domain.Action{Kind: chatlink.ActionApprove, JobID: pressed, Trace: buttonTP}), time.Now().UnixMilli()), pressed, buttonTID, true},
		{"press without a trace starts one", fakeline.PostbackEvent("01EVOLD", user, "",
			postback(domain.Action{Kind: chatlink.ActionDeny, JobID: pressed}), time.Now().UnixMilli()), pressed, "", true},
		{"press without a valid job follows the request", fakeline.PostbackEvent("01EVBAD", user, "",
			"a=approve&j=nonsense", time.Now().UnixMilli()), "", "request", false},
		{"follow follows the request", fakeline.OtherEvent("01EVFOLLOW", "follow", user, time.Now().UnixMilli()), "", "request", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			rec := tracetest.NewSpanRecorder()
			tp := sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec))
			store := &channeltest.MemStore{}
			h := httpapi.NewWebhook(secret, channeltest.Ingester("line", store, channeltest.FixedJobs{ID: allocated}, tp), slog.New(slog.DiscardHandler))
			body := fakeline.Body(tc.event)
			ctx, reqSpan := tp.Tracer("test").Start(context.Background(), "request")
			req := httptest.NewRequest(http.MethodPost, "/line/webhook", bytes.NewReader(body)).WithContext(ctx)
			req.Header.Set("X-Line-Signature", fakeline.Sign(secret, body))
			w := httptest.NewRecorder()
			h.ServeHTTP(w, req)
			reqSpan.End()
			if w.Code != http.StatusOK || len(store.Events) != 1 {
				t.Fatalf("status %d, %d events stored", w.Code, len(store.Events))
			}
			sc, job := metaContext(store.Events[0].Meta)
			if job != tc.wantJob {
				t.Errorf("baggage job_id %q, want %q", job, tc.wantJob)
			}
			reqTrace := reqSpan.SpanContext().TraceID().String()
			switch tc.wantTrace {
			case "request":
				if sc.TraceID().String() != reqTrace {
					t.Errorf("trace %s, want the request's %s", sc.TraceID(), reqTrace)
				}
			case "":
				if !sc.IsValid() || sc.TraceID().String() == reqTrace {
					t.Errorf("trace %s, want a new one (request %s)", sc.TraceID(), reqTrace)
				}
			default:
				if sc.TraceID().String() != tc.wantTrace {
					t.Errorf("trace %s, want %s", sc.TraceID(), tc.wantTrace)
				}
			}
			var receive sdktrace.ReadOnlySpan
			for _, s := range rec.Ended() {
				if s.Name() == "line.receive" {
					receive = s
				}
			}
			if (receive != nil) != tc.wantLinked {
				t.Fatalf("line.receive span recorded = %v, want %v", receive != nil, tc.wantLinked)
			}
			if receive != nil {
				if receive.SpanContext().SpanID() != sc.SpanID() {
					t.Errorf("stored context is not the receive span's")
				}
				if l := receive.Links(); len(l) != 1 || l[0].SpanContext.SpanID() != reqSpan.SpanContext().SpanID() {
					t.Errorf("receive span links %v, want the request span", l)
				}
			}
		})
	}
}

func TestJobIDFailureIsRedelivered(t *testing.T) {
	store := &channeltest.MemStore{}
	h := httpapi.NewWebhook(secret, channeltest.Ingester("line", store, channeltest.FixedJobs{Err: errors.New("no randomness")}, sdktrace.NewTracerProvider()), slog.New(slog.DiscardHandler))
	body := fakeline.Body(fakeline.TextEvent("01EVFAIL", user, "", "", "やあ", time.Now().UnixMilli(), false))
	w := serveSigned(h, body)
	if w.Code != http.StatusServiceUnavailable || len(store.Events) != 0 || !strings.Contains(w.Body.String(), `"code":"store_unavailable"`) {
		t.Fatalf("status %d, %d events stored", w.Code, len(store.Events))
	}
}

// TestOwnEventsIgnored: LINE names the bot's own user ID as the webhook's destination; a message
// or a button press whose source is that user — in a 1:1 chat or a group — is acknowledged and
// stored nowhere, while a person's message in the same request is kept.
func TestOwnEventsIgnored(t *testing.T) {
	store := &channeltest.MemStore{}
	h := httpapi.NewWebhook(secret, channeltest.Ingester("line", store, channeltest.FixedJobs{ID: pressed}, sdktrace.NewTracerProvider()), slog.New(slog.DiscardHandler)).
		MentionOnlyInGroups(true)
	now := time.Now().UnixMilli()
	body := fakeline.Body(
		fakeline.TextEvent("01EVOWNTEXT", fakeline.Destination, "", "rt-own1", "やあ", now, false),
		fakeline.MentionBot(fakeline.TextEvent("01EVOWNGROUP", fakeline.Destination, "Cgroup0001", "rt-own2", "グループ", now, false)),
		fakeline.PostbackEvent("01EVOWNPRESS", fakeline.Destination, "rt-own3", postback(domain.Action{Kind: chatlink.ActionApprove, JobID: pressed}), now),
		fakeline.TextEvent("01EVPERSON", user, "", "rt-person", "こんにちは", now, false),
	)
	w := serveSigned(h, body)
	if w.Code != http.StatusOK {
		t.Fatalf("status %d", w.Code)
	}
	if len(store.Events) != 1 || store.Events[0].ID != "01EVPERSON" {
		var ids []string
		for _, e := range store.Events {
			ids = append(ids, e.ID)
		}
		t.Fatalf("stored %v, want only the person's message", ids)
	}
}

// TestRejectedBodyErrorIsBounded: a signed body that does not decode is refused with 400, and the
// log's account of why does not carry the body: a timestamp of 100,000 digits, which the
// decoder's error quotes whole, is cut to a few hundred bytes.
func TestRejectedBodyErrorIsBounded(t *testing.T) {
	var logs bytes.Buffer
	h := httpapi.NewWebhook(secret, channeltest.Ingester("line", &channeltest.MemStore{}, channeltest.FixedJobs{ID: pressed}, sdktrace.NewTracerProvider()),
		slog.New(slog.NewJSONHandler(&logs, nil)))
	long := strings.Repeat("7", 100_000)
	body := []byte(`{"destination":"Ubot","events":[{"type":"message","mode":"active","timestamp":` + long +
		`,"source":{"type":"user","userId":"` + user + `"},"webhookEventId":"01EVLONG","deliveryContext":{"isRedelivery":false},` +
		`"replyToken":"rt","message":{"type":"text","id":"1","quoteToken":"q","text":"hi"}}]}`)
	w := serveSigned(h, body)
	if w.Code != http.StatusBadRequest {
		t.Fatalf("status %d, want 400", w.Code)
	}
	line := logs.String()
	if !strings.Contains(line, `"reason":"bad_body"`) || len(line) > 1000 || strings.Contains(line, strings.Repeat("7", 400)) {
		t.Fatalf("log of %d bytes: %.400s", len(line), line)
	}
	if !strings.Contains(line, "more bytes") {
		t.Fatalf("the cut is not said: %s", line)
	}
}
