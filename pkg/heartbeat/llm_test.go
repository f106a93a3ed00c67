package heartbeat

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/picoclaw-suite/picoclaw/pkg/jobid"
)

func TestTrackMakesCallsAgentTasks(t *testing.T) {
	agent := &Agent{Tracker: NewTracker(time.Now), ID: "worker", Alias: "Shiro", Kind: KindAgent}
	ctx := jobid.WithJobID(context.Background(), "job_20261121_009")

	release := make(chan error)
	done := make(chan struct{})
	call := func() {
		end := agent.Track(ctx)
		end(<-release)
		done <- struct{}{}
	}
	go call()
	waitFor(t, func() bool {
		s := agent.Snapshot(time.Minute)
		return s.Status == StatusBusy && len(s.JobIDs) == 1 && s.JobIDs[0] == "job_20261121_009"
	})
	release <- nil
	<-done
	if s := agent.Snapshot(time.Minute); s.Status != StatusIdle {
		t.Fatalf("after the call: %+v", s)
	}

	go call()
	release <- errors.New("provider down")
	<-done
	if s := agent.Snapshot(time.Minute); s.Status != StatusError || s.LastError == "" {
		t.Fatalf("after a failed call: %+v", s)
	}
	var none *Agent
	none.Track(ctx)(errors.New("ignored")) // a nil agent tracks nothing and must not panic
}

func waitFor(t *testing.T, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(5 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatal("condition not reached")
		}
		time.Sleep(5 * time.Millisecond)
	}
}
