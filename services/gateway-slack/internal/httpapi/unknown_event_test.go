package httpapi_test

import (
	"context"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"github.com/picoclaw-suite/picoclaw/pkg/channel/channeltest"
	"github.com/picoclaw-suite/picoclaw/pkg/testinfra/fakeslack"
	"github.com/picoclaw-suite/picoclaw/services/gateway-slack/internal/httpapi"
)

// Event types the suite does not handle — including ones the SDK does not know — are
// acknowledged with 200 and nothing is stored; a body that is no event at all is still 400.
func TestUnhandledEventTypesAreAcknowledged(t *testing.T) {
	store := &channeltest.MemStore{}
	h := httpapi.New(secret, channeltest.Ingester("slack", store, channeltest.FixedJobs{ID: "job_20261127_001"}, sdktrace.NewTracerProvider()),
		func() string { return fakeslack.BotUserID }, slog.New(slog.DiscardHandler))
	for body, want := range map[string]int{
		`{"type":"event_callback","team_id":"T1","api_app_id":"A1","event_id":"Ev9","event_time":1,"event":{"type":"some_future_event","user":"U1"}}`: http.StatusOK,
		`{"type":"event_callback","team_id":"T1","api_app_id":"A1","event_id":"Ev8","event_time":1,"event":{"type":"reaction_added","user":"U1"}}`:    http.StatusOK,
		`{"type":"event_callback","event_id":"","event":{"type":"nothing"}}`:                                                                          http.StatusBadRequest,
		`not json`: http.StatusBadRequest,
	} {
		w := httptest.NewRecorder()
		h.Events(w, signed(context.Background(), "/slack/events", "application/json", []byte(body)))
		if w.Code != want {
			t.Errorf("%s: status %d, want %d", body, w.Code, want)
		}
	}
	if len(store.Events) != 0 {
		t.Fatalf("stored %d events", len(store.Events))
	}
}
