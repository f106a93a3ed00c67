package store

import (
	"encoding/json"
	"fmt"
	"time"

	"github.com/picoclaw-suite/picoclaw/services/heartbeat/internal/domain"
)

// record is the stored form; it is versioned by its field names, not by Go types.
type record struct {
	AgentID            string    `json:"agent_id"`
	Alias              string    `json:"alias"`
	Service            string    `json:"service"`
	Kind               string    `json:"kind"`
	SentAt             time.Time `json:"sent_at"`
	Status             string    `json:"status"`
	JobIDs             []string  `json:"current_job_ids,omitempty"`
	MemoryMB           float64   `json:"memory_usage_mb"`
	LastTaskDurationMs int64     `json:"last_task_duration_ms"`
	ErrorMessage       string    `json:"error_message,omitempty"`
	ErrorCode          string    `json:"error_code,omitempty"`
	Note               string    `json:"note,omitempty"`
	NoteEN             string    `json:"note_en,omitempty"`
	Replica            string    `json:"replica,omitempty"`
	State              string    `json:"state"`
	LastSeen           time.Time `json:"last_seen"`
	StateSince         time.Time `json:"state_since"`
	IncidentSince      time.Time `json:"incident_since"`
	Streak             int       `json:"streak,omitempty"`
	FirstSeen          time.Time `json:"first_seen,omitzero"`
}

func encode(a domain.Agent) ([]byte, error) {
	return json.Marshal(record{
		AgentID: a.Last.AgentID, Alias: a.Last.Alias, Service: a.Last.Service, Kind: a.Last.Kind,
		SentAt: a.Last.SentAt, Status: string(a.Last.Status), JobIDs: a.Last.JobIDs, MemoryMB: a.Last.MemoryMB,
		LastTaskDurationMs: a.Last.LastTaskDurationMs, ErrorMessage: a.Last.ErrorMessage, ErrorCode: a.Last.ErrorCode, Note: a.Last.Note, NoteEN: a.Last.NoteEN, Replica: a.Last.Replica,
		State: string(a.State), LastSeen: a.LastSeen, StateSince: a.StateSince, IncidentSince: a.IncidentSince, Streak: a.Streak,
		FirstSeen: a.FirstSeen,
	})
}

func decode(data []byte) (domain.Agent, error) {
	var r record
	if err := json.Unmarshal(data, &r); err != nil {
		return domain.Agent{}, err
	}
	return domain.Agent{
		Last: domain.Beat{
			AgentID: r.AgentID, Alias: r.Alias, Service: r.Service, Kind: r.Kind, SentAt: r.SentAt,
			Status: domain.State(r.Status), JobIDs: r.JobIDs, MemoryMB: r.MemoryMB,
			LastTaskDurationMs: r.LastTaskDurationMs, ErrorMessage: r.ErrorMessage, ErrorCode: r.ErrorCode, Note: r.Note, NoteEN: r.NoteEN, Replica: r.Replica,
		},
		State: domain.State(r.State), LastSeen: r.LastSeen, StateSince: r.StateSince, IncidentSince: r.IncidentSince, Streak: r.Streak,
		FirstSeen: r.FirstSeen,
	}, nil
}

// step is the read-modify-write of one agent shared by both engines: raw is the stored record
// (missing when absent), fn decides, and the encoded record to store comes back (nil: nothing
// to write).
func step(name string, raw []byte, missing bool, fn func(cur *domain.Agent) *domain.Agent) ([]byte, error) {
	var cur *domain.Agent
	if !missing {
		a, err := decode(raw)
		if err != nil {
			return nil, fmt.Errorf("decode %s: %w", name, err)
		}
		cur = &a
	}
	next := fn(cur)
	if next == nil {
		return nil, nil
	}
	return encode(*next)
}
