// Package domain holds the rules of liveness: what a beat may say, how an agent's state moves
// between idle, busy, error and timeout, and which moves open or close an incident.
package domain

import (
	"fmt"
	"slices"
	"strings"
	"time"

	"github.com/picoclaw-suite/picoclaw/pkg/fault"
)

// ErrInvalid marks a beat that breaks the heartbeat contract.
var ErrInvalid = fault.New(fault.Invalid, "invalid heartbeat")

// State of an agent as the heartbeat service sees it.
type State string

// States. Timeout is only ever decided here, never sent by an agent.
const (
	StateIdle    State = "idle"
	StateBusy    State = "busy"
	StateError   State = "error"
	StateTimeout State = "timeout"
)

// Healthy reports whether the state needs no attention.
func (s State) Healthy() bool { return s == StateIdle || s == StateBusy }

// Beat is one heartbeat as an agent sent it (SPEC §9).
type Beat struct {
	AgentID string
	Alias   string
	// Service hosts the agent; Kind is "service" or "agent".
	Service string
	Kind    string
	// SentAt is the sender's clock; LastSeen (receiver's clock) decides timeouts.
	SentAt             time.Time
	Status             State
	JobIDs             []string
	MemoryMB           float64
	LastTaskDurationMs int64
	ErrorMessage       string
	// ErrorCode is what kind of failure ErrorMessage is (e.g. llm.unauthenticated): the report
	// says the kind in its reader's language, ErrorMessage being a short safe detail. "" for
	// other failures and from older senders.
	ErrorCode string
	// Note is the sender's standing note (e.g. how the executor's sandbox runs), in Japanese;
	// NoteEN in English ("" from older senders).
	Note, NoteEN string
	// Replica is the sending replica of the service ("" from older senders); each replica of an
	// agent is tracked by itself (Key).
	Replica string
	// Leaving: the replica is stopping on purpose and is to be forgotten.
	Leaving bool
}

// Key identifies what the beat is about: the agent on one replica ("chat@chat-mio-7f9-…"), or
// the agent alone for a sender that names no replica.
func (b Beat) Key() string { return Key(b.AgentID, b.Replica) }

// Key is the key of agent id on replica.
func Key(id, replica string) string {
	if replica == "" {
		return id
	}
	return id + "@" + replica
}

// CurrentJobID is the oldest job in flight, or "".
func (b Beat) CurrentJobID() string {
	if len(b.JobIDs) == 0 {
		return ""
	}
	return b.JobIDs[0]
}

// Validate checks the contract: an agent id and a status the agent may report.
func (b Beat) Validate() error {
	if b.AgentID == "" {
		return fmt.Errorf("%w: agent_id is required", ErrInvalid)
	}
	if len(b.AgentID) > 64 {
		return fmt.Errorf("%w: agent_id longer than 64 characters", ErrInvalid)
	}
	if len(b.Replica) > 64 || strings.ContainsAny(b.Replica, "@ /") || strings.Contains(b.AgentID, "@") {
		return fmt.Errorf("%w: replica_id longer than 64 characters, or '@', ' ' or '/' in an id", ErrInvalid)
	}
	switch b.Status {
	case StateIdle, StateBusy, StateError:
	default:
		return fmt.Errorf("%w: status must be idle, busy or error, got %q", ErrInvalid, b.Status)
	}
	if b.MemoryMB < 0 || b.LastTaskDurationMs < 0 {
		return fmt.Errorf("%w: memory and duration must not be negative", ErrInvalid)
	}
	return nil
}

// Agent is the last known picture of one agent or service.
type Agent struct {
	Last     Beat
	State    State
	LastSeen time.Time
	// StateSince is when the current state began.
	StateSince time.Time
	// IncidentSince is when the open incident began; zero while none is open. With hysteresis
	// an agent can be in error with no incident open yet, or healthy with one still open.
	IncidentSince time.Time
	// Streak counts the observations in a row (beats, a timeout) that were as healthy, or as
	// unhealthy, as the latest one.
	Streak int
	// FirstSeen is when this replica's first beat arrived.
	FirstSeen time.Time
}

// Replaces reports whether a, alive, took the place of gone: a started after gone's last beat
// (a process restarted under a new replica id, a pod rescheduled).
func (a Agent) Replaces(gone Agent) bool {
	return !a.Gone() && a.Last.AgentID == gone.Last.AgentID && a.Last.Key() != gone.Last.Key() && a.FirstSeen.After(gone.LastSeen)
}

// Hysteresis decides when an incident opens and closes: after Open unhealthy observations in
// a row (a timeout opens it at once: it is already timeout_sec of silence), and after Close
// healthy ones in a row. A flapping replica then makes one incident, not one per flap; zero
// values count as 1.
type Hysteresis struct {
	Open  int
	Close int
}

// Change is a move of an agent from one state to another, or an incident that opened or closed
// (then the state may be the same as before).
type Change struct {
	Agent Agent
	// Previous is "" for an agent seen for the first time.
	Previous State
	// IncidentSince identifies the incident an alert or a recovery belongs to.
	IncidentSince time.Time
	// Kind is the alert the change makes.
	Kind AlertKind
	// ReplacedBy names the replica that took the agent's place (AlertReplaced).
	ReplacedBy string
	// ShowReplica: the agent runs as several replicas, so texts name the replica.
	ShowReplica bool
}

// AlertKind says whether a change is worth telling the admin.
type AlertKind int

// Alert kinds: one alert when an incident opens, one when it closes; nothing in between.
const (
	AlertNone AlertKind = iota
	AlertIncident
	AlertRecovery
	// AlertLeft: a replica with an open incident stopped on purpose while others of its agent
	// run on; the incident ends with it.
	AlertLeft
	// AlertReplaced: a new replica took the place of one that was gone with an incident open.
	AlertReplaced
)

// Alert is what the change tells the admin. A new agent that arrives healthy is no news; error
// → timeout (or back) stays the same incident.
func (c Change) Alert() AlertKind { return c.Kind }

// StateMoved reports whether the agent's state changed (watchers see these).
func (c Change) StateMoved() bool { return c.Previous != c.Agent.State }

// Receive applies a beat received at now to the agent's picture (nil for an unknown agent). The
// change is nil when neither the state moved nor an incident opened or closed.
func Receive(cur *Agent, b Beat, now time.Time, h Hysteresis) (Agent, *Change) {
	next := Agent{Last: b, State: b.Status, LastSeen: now, StateSince: now, FirstSeen: now}
	prev := State("")
	if cur != nil {
		prev = cur.State
		next.IncidentSince, next.Streak, next.FirstSeen = cur.IncidentSince, cur.Streak, cur.FirstSeen
		if cur.State == b.Status {
			next.StateSince = cur.StateSince
		}
	}
	return next, observe(&next, cur, prev, now, h)
}

// Leave is what forgetting a replica that stopped on purpose tells: an incident still open
// ends with an AlertLeft change (nil otherwise).
func Leave(cur Agent) *Change { return ended(cur, AlertLeft, "") }

// Replace is what forgetting a replica that is gone (timed out, stopped on purpose, or an entry
// of a sender that named no replica) tells when replica by took its place: an incident still
// open ends with an AlertReplaced change (nil otherwise).
func Replace(cur Agent, by string) *Change { return ended(cur, AlertReplaced, by) }

// Gone reports whether the replica is not running any more: silent past the timeout, stopped on
// purpose, or an entry of a sender that named no replica.
func (a Agent) Gone() bool { return a.State == StateTimeout || a.Last.Leaving || a.Last.Replica == "" }

func ended(cur Agent, kind AlertKind, by string) *Change {
	if cur.IncidentSince.IsZero() {
		return nil
	}
	return &Change{Agent: cur, Previous: cur.State, IncidentSince: cur.IncidentSince, Kind: kind, ReplacedBy: by}
}

// Expire marks the agent timeout when it has not beaten for timeout since the later of its last
// beat and notBefore (the moment the heartbeat service started: beats sent while it was down
// could not be received, so they are not held against the agent).
func Expire(cur Agent, now, notBefore time.Time, timeout time.Duration, h Hysteresis) (Agent, *Change) {
	if cur.State == StateTimeout {
		return cur, nil
	}
	seen := cur.LastSeen
	if notBefore.After(seen) {
		seen = notBefore
	}
	if now.Sub(seen) < timeout {
		return cur, nil
	}
	next := cur
	next.State = StateTimeout
	next.StateSince = now
	return next, observe(&next, &cur, cur.State, now, h)
}

// Overdue reports whether Expire would mark the agent timeout now.
func Overdue(a Agent, now, notBefore time.Time, timeout time.Duration) bool {
	_, ch := Expire(a, now, notBefore, timeout, Hysteresis{})
	return ch != nil
}

// observe counts next's state as one more observation after cur (nil: the first one) and
// opens or closes the incident as h says; the change is nil when nothing moved.
func observe(next, cur *Agent, prev State, now time.Time, h Hysteresis) *Change {
	healthy := next.State.Healthy()
	if cur != nil && cur.State.Healthy() == healthy {
		next.Streak = cur.Streak + 1
	} else {
		next.Streak = 1
	}
	ch := &Change{Previous: prev, IncidentSince: next.IncidentSince}
	open := !next.IncidentSince.IsZero()
	switch {
	case !open && !healthy && (next.State == StateTimeout || next.Streak >= max(h.Open, 1)):
		next.IncidentSince, ch.IncidentSince, ch.Kind = now, now, AlertIncident
	case open && healthy && next.Streak >= max(h.Close, 1):
		next.IncidentSince, ch.Kind = time.Time{}, AlertRecovery
	}
	if ch.Kind == AlertNone && prev == next.State {
		return nil
	}
	ch.Agent = *next
	return ch
}

// rank orders the five agents first, then the services as in the spec.
func rank(id string) int {
	order := [...]string{
		"chat", "worker", "order1", "order2", "order3",
		"gateway-line", "gateway-slack", "chat-mio", "router-shiro", "coder-order", "approval", "executor", "heartbeat",
	}
	if i := slices.Index(order[:], id); i >= 0 {
		return i
	}
	return len(order)
}

// Sort orders a report: the five agents, then the services as in the spec, then anything else
// by id; the replicas of one agent by replica id.
func Sort(agents []Agent) {
	slices.SortStableFunc(agents, func(a, b Agent) int {
		if ra, rb := rank(a.Last.AgentID), rank(b.Last.AgentID); ra != rb {
			return ra - rb
		}
		if c := strings.Compare(a.Last.AgentID, b.Last.AgentID); c != 0 {
			return c
		}
		return strings.Compare(a.Last.Replica, b.Last.Replica)
	})
}
