// Package httpapi serves the aggregated report as JSON (GET /v1/status).
package httpapi

import (
	"encoding/json"
	"log/slog"
	"net/http"
	"time"

	"github.com/picoclaw-suite/picoclaw/services/heartbeat/internal/app"
	"github.com/picoclaw-suite/picoclaw/services/heartbeat/internal/domain"
)

// StatusPath is the route of the JSON report.
const StatusPath = "/v1/status"

// AgentJSON is one agent in the JSON report.
type AgentJSON struct {
	AgentID            string    `json:"agent_id"`
	Alias              string    `json:"alias"`
	Kind               string    `json:"kind"`
	Service            string    `json:"service"`
	Status             string    `json:"status"`
	LastSeen           time.Time `json:"last_seen"`
	StateSince         time.Time `json:"state_since"`
	CurrentJobID       string    `json:"current_job_id"`
	CurrentJobIDs      []string  `json:"current_job_ids"`
	MemoryUsageMB      float64   `json:"memory_usage_mb"`
	LastTaskDurationMs int64     `json:"last_task_duration_ms"`
	ErrorMessage       string    `json:"error_message"`
	// ErrorCode is the kind of failure (e.g. llm.rate_limited), ErrorText the error as the
	// report's text says it, in the requested locale.
	ErrorCode string `json:"error_code,omitempty"`
	ErrorText string `json:"error_text,omitempty"`
	Note      string `json:"note,omitempty"`
	NoteEN    string `json:"note_en,omitempty"`
}

// StatusJSON is the JSON report.
type StatusJSON struct {
	GeneratedAt time.Time   `json:"generated_at"`
	Agents      []AgentJSON `json:"agents"`
	Text        string      `json:"text"`
}

// Status serves the report; ?locale=en switches the text to English.
func Status(svc *app.Service, log *slog.Logger) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		rep, err := svc.Report(r.Context(), app.ParseLocale(r.URL.Query().Get("locale")))
		if err != nil {
			log.ErrorContext(r.Context(), "heartbeat.internal_error", slog.String("error", err.Error()))
			writeJSON(w, http.StatusInternalServerError, map[string]string{"code": "internal", "message": "internal error"})
			return
		}
		out := StatusJSON{GeneratedAt: rep.GeneratedAt, Text: rep.Text, Agents: make([]AgentJSON, 0, len(rep.Agents))}
		for _, a := range rep.Agents {
			out.Agents = append(out.Agents, toJSON(a, rep.Locale))
		}
		writeJSON(w, http.StatusOK, out)
	})
}

func toJSON(a domain.Agent, l app.Locale) AgentJSON {
	jobs := a.Last.JobIDs
	if jobs == nil {
		jobs = []string{}
	}
	return AgentJSON{
		AgentID: a.Last.AgentID, Alias: a.Last.Alias, Kind: a.Last.Kind, Service: a.Last.Service,
		Status: string(a.State), LastSeen: a.LastSeen, StateSince: a.StateSince, CurrentJobID: a.Last.CurrentJobID(), CurrentJobIDs: jobs,
		MemoryUsageMB: a.Last.MemoryMB, LastTaskDurationMs: a.Last.LastTaskDurationMs, ErrorMessage: a.Last.ErrorMessage,
		ErrorCode: a.Last.ErrorCode, ErrorText: app.ErrorText(l, a.Last), Note: a.Last.Note, NoteEN: a.Last.NoteEN,
	}
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json; charset=utf-8")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}
