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
					next, ch = Receive(cur, beat("order1", s.beat), now)
				} else {
					next, ch = Expire(*cur, now, t0, timeout)
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
	a, _ := Receive(nil, beat("order2", StateIdle), t0)
	a, open := Expire(a, t0.Add(time.Minute), t0, time.Minute)
	_, closed := Receive(&a, beat("order2", StateIdle), t0.Add(2*time.Minute))
	if open.IncidentSince != closed.IncidentSince || open.IncidentSince != t0.Add(time.Minute) {
		t.Fatalf("incident %v closed as %v", open.IncidentSince, closed.IncidentSince)
	}
}

func TestExpireGraceAfterStart(t *testing.T) {
	a, _ := Receive(nil, beat("executor", StateIdle), t0)
	started := t0.Add(10 * time.Minute) // the heartbeat service was down meanwhile
	if _, ch := Expire(a, started.Add(59*time.Second), started, time.Minute); ch != nil {
		t.Fatal("agent expired for beats the heartbeat service could not receive")
	}
	if _, ch := Expire(a, started.Add(time.Minute), started, time.Minute); ch == nil {
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
