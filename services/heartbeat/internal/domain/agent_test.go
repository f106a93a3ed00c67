package domain

import (
	"errors"
	"testing"
	"time"
)

var t0 = time.Date(2026, 1, 1, 9, 0, 0, 0, time.UTC)

func beat(id string, s State) Beat {
	return Beat{AgentID: id, Alias: id, Status: s, Kind: "service"}
}

func TestBeatValidate(t *testing.T) {
	tests := []struct {
		name string
		b    Beat
		ok   bool
	}{
		{"idle", beat("executor", StateIdle), true},
		{"busy", beat("executor", StateBusy), true},
		{"error", beat("executor", StateError), true},
		{"no id", beat("", StateIdle), false},
		{"timeout is not the sender's to say", beat("executor", StateTimeout), false},
		{"no status", beat("executor", ""), false},
		{"id too long", beat(string(make([]byte, 65)), StateIdle), false},
		{"negative memory", Beat{AgentID: "x", Status: StateIdle, MemoryMB: -1}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			err := tt.b.Validate()
			if tt.ok != (err == nil) {
				t.Fatalf("Validate() = %v, want ok=%v", err, tt.ok)
			}
			if err != nil && !errors.Is(err, ErrInvalid) {
				t.Fatalf("error %v is not ErrInvalid", err)
			}
		})
	}
}

func TestTransitions(t *testing.T) {
	const timeout = 60 * time.Second
	type step struct {
		beat    State // "" = sweep at the step's time
		at      time.Duration
		state   State
		changed bool
		alert   AlertKind
	}
	tests := []struct {
		name  string
		steps []step
	}{
		{"first beat idle is no news", []step{{beat: StateIdle, state: StateIdle, changed: true, alert: AlertNone}}},
		{"first beat error alerts", []step{{beat: StateError, state: StateError, changed: true, alert: AlertIncident}}},
		{"same state twice is no change", []step{
			{beat: StateIdle, state: StateIdle, changed: true},
			{beat: StateIdle, at: time.Second, state: StateIdle},
		}},
		{"idle to busy changes without alert", []step{
			{beat: StateIdle, state: StateIdle, changed: true},
			{beat: StateBusy, at: time.Second, state: StateBusy, changed: true, alert: AlertNone},
		}},
		{"error once, recovery once", []step{
			{beat: StateIdle, state: StateIdle, changed: true},
			{beat: StateError, at: 1 * time.Second, state: StateError, changed: true, alert: AlertIncident},
			{beat: StateError, at: 2 * time.Second, state: StateError},
			{beat: StateBusy, at: 3 * time.Second, state: StateBusy, changed: true, alert: AlertRecovery},
		}},
		{"silent agent times out once and recovers", []step{
			{beat: StateIdle, state: StateIdle, changed: true},
			{at: 59 * time.Second, state: StateIdle},
			{at: 60 * time.Second, state: StateTimeout, changed: true, alert: AlertIncident},
			{at: 90 * time.Second, state: StateTimeout},
			{beat: StateIdle, at: 95 * time.Second, state: StateIdle, changed: true, alert: AlertRecovery},
		}},
		{"error then timeout is one incident", []step{
			{beat: StateError, state: StateError, changed: true, alert: AlertIncident},
			{at: 61 * time.Second, state: StateTimeout, changed: true, alert: AlertNone},
			{beat: StateError, at: 62 * time.Second, state: StateError, changed: true, alert: AlertNone},
			{beat: StateIdle, at: 63 * time.Second, state: StateIdle, changed: true, alert: AlertRecovery},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var cur *Agent
			for i, s := range tt.steps {
				now := t0.Add(s.at)
				var next Agent
				var ch *Change
				if s.beat != "" {
					next, ch = Receive(cur, beat("order1", s.beat), now, Hysteresis{Open: 1, Close: 1})
				} else {
					next, ch = Expire(*cur, now, t0, timeout, Hysteresis{Open: 1, Close: 1})
				}
				if next.State != s.state {
					t.Fatalf("step %d: state = %s, want %s", i, next.State, s.state)
				}
				if (ch != nil) != s.changed {
					t.Fatalf("step %d: change = %v, want changed=%v", i, ch, s.changed)
				}
				if ch != nil && ch.Alert() != s.alert {
					t.Fatalf("step %d: alert = %v, want %v", i, ch.Alert(), s.alert)
				}
				if ch != nil && ch.Alert() != AlertNone && ch.IncidentSince.IsZero() {
					t.Fatalf("step %d: alert without incident time", i)
				}
				if next.State.Healthy() != next.IncidentSince.IsZero() {
					t.Fatalf("step %d: state %s with incident since %v", i, next.State, next.IncidentSince)
				}
				cur = &next
			}
		})
	}
}

func TestIncidentIdentity(t *testing.T) {
	one := Hysteresis{Open: 1, Close: 1}
	a, _ := Receive(nil, beat("order2", StateIdle), t0, one)
	a, open := Expire(a, t0.Add(time.Minute), t0, time.Minute, one)
	_, closed := Receive(&a, beat("order2", StateIdle), t0.Add(2*time.Minute), one)
	if open.IncidentSince != closed.IncidentSince || open.IncidentSince != t0.Add(time.Minute) {
		t.Fatalf("incident %v closed as %v", open.IncidentSince, closed.IncidentSince)
	}
}

func TestExpireGraceAfterStart(t *testing.T) {
	a, _ := Receive(nil, beat("executor", StateIdle), t0, Hysteresis{})
	started := t0.Add(10 * time.Minute) // the heartbeat service was down meanwhile
	if _, ch := Expire(a, started.Add(59*time.Second), started, time.Minute, Hysteresis{}); ch != nil {
		t.Fatal("agent expired for beats the heartbeat service could not receive")
	}
	if _, ch := Expire(a, started.Add(time.Minute), started, time.Minute, Hysteresis{}); ch == nil {
		t.Fatal("agent not expired a timeout after start")
	}
}

func TestSort(t *testing.T) {
	var agents []Agent
	for _, id := range []string{"zeta", "heartbeat", "order3", "approval", "chat", "gateway-line", "alpha", "worker"} {
		agents = append(agents, Agent{Last: Beat{AgentID: id}})
	}
	Sort(agents)
	want := []string{"chat", "worker", "order3", "gateway-line", "approval", "heartbeat", "alpha", "zeta"}
	for i, a := range agents {
		if a.Last.AgentID != want[i] {
			t.Fatalf("order[%d] = %s, want %s (all: %v)", i, a.Last.AgentID, want[i], agents)
		}
	}
}

// With hysteresis an incident opens after Open unhealthy observations in a row and closes after
// Close healthy ones in a row: a replica that flaps between error and idle, or reports one
// passing error, makes no alert storm; a timeout opens an incident at once.
func TestHysteresis(t *testing.T) {
	h := Hysteresis{Open: 3, Close: 2}
	const timeout = time.Minute
	type step struct {
		beat  State // "" = the agent went silent: sweep a timeout later
		alert AlertKind
		open  bool // an incident is open afterwards
	}
	tests := []struct {
		name  string
		steps []step
	}{
		{"a passing error is no incident", []step{
			{beat: StateIdle}, {beat: StateError}, {beat: StateError}, {beat: StateIdle}, {beat: StateError}, {beat: StateIdle},
		}},
		{"flapping never opens", []step{
			{beat: StateError}, {beat: StateIdle}, {beat: StateError}, {beat: StateIdle}, {beat: StateError}, {beat: StateIdle},
			{beat: StateError}, {beat: StateIdle},
		}},
		{"three errors in a row open one incident, two good beats close it", []step{
			{beat: StateIdle}, {beat: StateError}, {beat: StateError},
			{beat: StateError, alert: AlertIncident, open: true},
			{beat: StateError, open: true}, {beat: StateError, open: true},
			{beat: StateIdle, open: true},
			{beat: StateError, open: true}, // one good beat is not enough, and the streak restarts
			{beat: StateBusy, open: true},
			{beat: StateIdle, alert: AlertRecovery},
			{beat: StateIdle},
		}},
		{"a timeout opens at once", []step{
			{beat: StateIdle}, {alert: AlertIncident, open: true},
			{beat: StateIdle, open: true}, {beat: StateIdle, alert: AlertRecovery},
		}},
		{"error streak then timeout is the same incident", []step{
			{beat: StateError}, {beat: StateError}, {beat: StateError, alert: AlertIncident, open: true},
			{open: true}, {beat: StateError, open: true}, {beat: StateIdle, open: true}, {beat: StateIdle, alert: AlertRecovery},
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var cur *Agent
			now := t0
			alerts := 0
			for i, s := range tt.steps {
				var next Agent
				var ch *Change
				if s.beat != "" {
					now = now.Add(time.Second)
					next, ch = Receive(cur, beat("chat-mio", s.beat), now, h)
				} else {
					now = now.Add(timeout)
					next, ch = Expire(*cur, now, t0, timeout, h)
					if next.State != StateTimeout {
						t.Fatalf("step %d: not timed out", i)
					}
				}
				got := AlertNone
				if ch != nil {
					got = ch.Alert()
				}
				if got != s.alert {
					t.Fatalf("step %d (%s): alert %v, want %v", i, s.beat, got, s.alert)
				}
				if got != AlertNone {
					alerts++
				}
				if open := !next.IncidentSince.IsZero(); open != s.open {
					t.Fatalf("step %d (%s): incident open %v, want %v", i, s.beat, open, s.open)
				}
				cur = &next
			}
		})
	}
}

// A replica forgotten while an incident is open closes it with one message; one forgotten
// healthy says nothing.
func TestLeaveAndReplace(t *testing.T) {
	one := Hysteresis{Open: 1, Close: 1}
	sick, _ := Receive(nil, beat("executor", StateError), t0, one)
	if ch := Leave(sick); ch == nil || ch.Alert() != AlertLeft || !ch.IncidentSince.Equal(t0) {
		t.Fatalf("leave of a sick replica = %+v", ch)
	}
	if ch := Replace(sick, "pod-9"); ch == nil || ch.Alert() != AlertReplaced || ch.ReplacedBy != "pod-9" {
		t.Fatalf("replacement of a sick replica = %+v", ch)
	}
	well, _ := Receive(nil, beat("executor", StateIdle), t0, one)
	if Leave(well) != nil || Replace(well, "pod-9") != nil {
		t.Fatal("forgetting a healthy replica alerts")
	}
	well.Last.Replica = "pod-1"
	if well.Gone() {
		t.Fatal("a healthy named replica counts as gone")
	}
	left := well
	left.Last.Leaving = true
	dead, _ := Expire(well, t0.Add(time.Hour), t0, time.Minute, one)
	unnamed, _ := Receive(nil, beat("executor", StateIdle), t0, one)
	for _, a := range []Agent{left, dead, unnamed} {
		if !a.Gone() {
			t.Fatalf("%+v does not count as gone", a)
		}
	}
}

func TestKeyAndReplicaValidation(t *testing.T) {
	b := beat("chat", StateIdle)
	if b.Key() != "chat" {
		t.Fatalf("key without replica = %q", b.Key())
	}
	b.Replica = "chat-mio-pod-1"
	if b.Key() != "chat@chat-mio-pod-1" || b.Validate() != nil {
		t.Fatalf("key = %q, validate = %v", b.Key(), b.Validate())
	}
	for _, bad := range []string{"a@b", "a b", string(make([]byte, 65))} {
		b.Replica = bad
		if err := b.Validate(); !errors.Is(err, ErrInvalid) {
			t.Errorf("replica %q accepted", bad)
		}
	}
}
