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
	// Note is the sender's standing note (e.g. how the executor's sandbox runs).
	Note string
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
	// IncidentSince is when the agent last left the healthy states; zero while healthy.
	IncidentSince time.Time
}

// Change is a move of an agent from one state to another.
type Change struct {
	Agent Agent
	// Previous is "" for an agent seen for the first time.
	Previous State
	// IncidentSince identifies the incident an alert or a recovery belongs to.
	IncidentSince time.Time
}

// AlertKind says whether a change is worth telling the admin.
type AlertKind int

// Alert kinds: one alert when an incident opens, one when it closes; nothing in between.
const (
	AlertNone AlertKind = iota
	AlertIncident
	AlertRecovery
)

// Alert classifies the change. A new agent that arrives healthy is no news; one that arrives in
// error is. Error → timeout (or back) stays the same incident.
func (c Change) Alert() AlertKind {
	prevHealthy := c.Previous == "" || c.Previous.Healthy()
	switch {
	case prevHealthy && !c.Agent.State.Healthy():
		return AlertIncident
	case !prevHealthy && c.Agent.State.Healthy():
		return AlertRecovery
	}
	return AlertNone
}

// Receive applies a beat received at now to the agent's picture (nil for an unknown agent). The
// change is nil when the state did not move.
func Receive(cur *Agent, b Beat, now time.Time) (Agent, *Change) {
	next := Agent{Last: b, State: b.Status, LastSeen: now, StateSince: now}
	prev := State("")
	if cur != nil {
		prev = cur.State
		next.IncidentSince = cur.IncidentSince
		if cur.State == b.Status {
			next.StateSince = cur.StateSince
			return next, nil
		}
	}
	return next, transition(&next, prev, now)
}

// Expire marks the agent timeout when it has not beaten for timeout since the later of its last
// beat and notBefore (the moment the heartbeat service started: beats sent while it was down
// could not be received, so they are not held against the agent).
func Expire(cur Agent, now, notBefore time.Time, timeout time.Duration) (Agent, *Change) {
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
	return next, transition(&next, cur.State, now)
}

// Overdue reports whether Expire would mark the agent timeout now.
func Overdue(a Agent, now, notBefore time.Time, timeout time.Duration) bool {
	_, ch := Expire(a, now, notBefore, timeout)
	return ch != nil
}

func transition(next *Agent, prev State, now time.Time) *Change {
	ch := &Change{Agent: *next, Previous: prev, IncidentSince: next.IncidentSince}
	switch ch.Alert() {
	case AlertIncident:
		next.IncidentSince = now
		ch.IncidentSince = now
	case AlertRecovery:
		next.IncidentSince = time.Time{}
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
// by id.
func Sort(agents []Agent) {
	slices.SortStableFunc(agents, func(a, b Agent) int {
		if ra, rb := rank(a.Last.AgentID), rank(b.Last.AgentID); ra != rb {
			return ra - rb
		}
		return strings.Compare(a.Last.AgentID, b.Last.AgentID)
	})
}
