package heartbeat

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/picoclaw-suite/picoclaw/pkg/jobid"
	"github.com/picoclaw-suite/picoclaw/pkg/llm"
)

// blockingModel answers when released, so the test can look at the agent mid-call.
type blockingModel struct {
	release chan error
}

func (b *blockingModel) Chat(ctx context.Context, _ llm.Request) (*llm.Response, error) {
	if err := <-b.release; err != nil {
		return nil, err
	}
	return &llm.Response{Text: "ok"}, nil
}
func (b *blockingModel) Provider() string { return "offline" }
func (b *blockingModel) Model() string    { return "m" }
func (b *blockingModel) Cloud() bool      { return false }

func TestTrackLLMMakesCallsAgentTasks(t *testing.T) {
	agent := &Agent{Tracker: NewTracker(time.Now), ID: "worker", Alias: "Shiro", Kind: KindAgent}
	model := &blockingModel{release: make(chan error)}
	client := TrackLLM(agent, model)
	ctx := jobid.WithJobID(context.Background(), "job_20261121_009")

	done := make(chan error)
	go func() { _, err := client.Chat(ctx, llm.Request{}); done <- err }()
	waitFor(t, func() bool {
		s := agent.Snapshot(time.Minute)
		return s.Status == StatusBusy && len(s.JobIDs) == 1 && s.JobIDs[0] == "job_20261121_009"
	})
	model.release <- nil
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	if s := agent.Snapshot(time.Minute); s.Status != StatusIdle {
		t.Fatalf("after the call: %+v", s)
	}

	go func() { _, err := client.Chat(ctx, llm.Request{}); done <- err }()
	model.release <- errors.New("provider down")
	<-done
	if s := agent.Snapshot(time.Minute); s.Status != StatusError || s.LastError == "" {
		t.Fatalf("after a failed call: %+v", s)
	}
	if client.Provider() != "offline" || TrackLLM(nil, model) != llm.Client(model) {
		t.Fatal("wrapper must keep the client's identity and pass nil agents through")
	}
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
