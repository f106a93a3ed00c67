package heartbeat

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	heartbeatv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/heartbeat/v1"
	"github.com/picoclaw-suite/picoclaw/gen/picoclaw/heartbeat/v1/heartbeatv1connect"
	"github.com/picoclaw-suite/picoclaw/pkg/testinfra"
)

// recorder is a heartbeat service that keeps what it receives.
type recorder struct {
	heartbeatv1connect.UnimplementedHeartbeatServiceHandler
	mu    sync.Mutex
	beats []*heartbeatv1.Heartbeat
	got   chan struct{}
}

func (r *recorder) Beat(_ context.Context, req *heartbeatv1.BeatRequest) (*heartbeatv1.BeatResponse, error) {
	r.mu.Lock()
	r.beats = append(r.beats, req.GetHeartbeat())
	r.mu.Unlock()
	select {
	case r.got <- struct{}{}:
	default:
	}
	return &heartbeatv1.BeatResponse{}, nil
}

func (r *recorder) byAgent() map[string]*heartbeatv1.Heartbeat {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := map[string]*heartbeatv1.Heartbeat{}
	for _, b := range r.beats {
		out[b.GetAgentId()] = b
	}
	return out
}

func startRecorder(t *testing.T) (*recorder, string) {
	t.Helper()
	rec := &recorder{got: make(chan struct{}, 1)}
	mux := http.NewServeMux()
	mux.Handle(heartbeatv1connect.NewHeartbeatServiceHandler(rec))
	srv := httptest.NewServer(mux)
	t.Cleanup(srv.Close)
	return rec, srv.URL
}

func TestSenderBeatsServiceAndAgents(t *testing.T) {
	rec, url := startRecorder(t)
	s, err := NewSender(Config{Service: "coder-order", URL: url, Interval: time.Second})
	if err != nil {
		t.Fatal(err)
	}
	aka := s.Agent("order1", "Aka")
	ao := s.Agent("order2", "Ao")
	if again := s.Agent("order1", "Aka"); again != aka {
		t.Fatal("registering the same agent twice returned a new tracker")
	}
	gin := s.Agent("order3", "Gin")
	aka.Begin("job_20260101_007")
	ao.Begin("").End(errors.New("openai: 429 rate limited"))
	// A failure that says how it is reported (a model call's): its code, and only its safe
	// detail — the provider's words stay in the error, for the log.
	gin.Begin("").End(fmt.Errorf("order3: %w", reportedFailure{code: "llm.unauthenticated", detail: "openai gpt-4o HTTP 401",
		err: errors.New("HTTP 401: Incorrect API key provided: sk-proj-abc")}))
	s.Service().SetNote("サンドボックス: なし", "sandbox: none")

	if err := s.BeatOnce(context.Background()); err != nil {
		t.Fatal(err)
	}
	got := rec.byAgent()
	if len(got) != 4 {
		t.Fatalf("got beats for %d agents, want 4 (service + 3 agents): %v", len(got), got)
	}
	svc := got["coder-order"]
	if svc.GetKind() != "service" || svc.GetStatus() != heartbeatv1.AgentState_AGENT_STATE_IDLE || svc.GetService() != "coder-order" ||
		svc.GetNote() != "サンドボックス: なし" || svc.GetNoteEn() != "sandbox: none" {
		t.Errorf("service beat = %v", svc)
	}
	a := got["order1"]
	if a.GetAlias() != "Aka" || a.GetKind() != "agent" || a.GetStatus() != heartbeatv1.AgentState_AGENT_STATE_BUSY ||
		a.GetCurrentJobId() != "job_20260101_007" || a.GetService() != "coder-order" {
		t.Errorf("order1 beat = %v", a)
	}
	b := got["order2"]
	if b.GetStatus() != heartbeatv1.AgentState_AGENT_STATE_ERROR || b.GetErrorMessage() != "openai: 429 rate limited" || b.GetErrorCode() != "" {
		t.Errorf("order2 beat = %v", b)
	}
	if c := got["order3"]; c.GetStatus() != heartbeatv1.AgentState_AGENT_STATE_ERROR || c.GetErrorCode() != "llm.unauthenticated" ||
		c.GetErrorMessage() != "openai gpt-4o HTTP 401" {
		t.Errorf("order3 beat = %v", c)
	}
	if a.GetMemoryUsageMb() <= 0 || a.GetTimestamp() == nil {
		t.Errorf("beat lacks memory or timestamp: %v", a)
	}
}

func TestSenderRunBeatsUntilCancelled(t *testing.T) {
	rec, url := startRecorder(t)
	s, err := NewSender(Config{Service: "executor", URL: url, Interval: 20 * time.Millisecond})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	for range 3 {
		select {
		case <-rec.got:
		case <-time.After(5 * time.Second):
			t.Fatal("no beat received")
		}
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatalf("Run = %v", err)
	}
}

// Every beat names the sender's replica, and the beats sent when Run ends say it is leaving.
func TestSenderNamesItsReplicaAndLeaves(t *testing.T) {
	rec, url := startRecorder(t)
	s, err := NewSender(Config{Service: "chat-mio", Replica: "chat-mio-pod-1", URL: url, Interval: time.Hour})
	if err != nil {
		t.Fatal(err)
	}
	s.Agent("chat", "Mio")
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.Run(ctx) }()
	<-rec.got
	testinfra.Eventually(t, 5*time.Second, "the first beats", func() bool {
		rec.mu.Lock()
		defer rec.mu.Unlock()
		return len(rec.beats) == 2
	})
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	rec.mu.Lock()
	defer rec.mu.Unlock()
	if len(rec.beats) != 4 {
		t.Fatalf("%d beats, want 2 while running and 2 leaving", len(rec.beats))
	}
	for i, b := range rec.beats {
		if b.GetReplicaId() != "chat-mio-pod-1" || b.GetLeaving() != (i >= 2) {
			t.Errorf("beat %d: replica %q leaving %v", i, b.GetReplicaId(), b.GetLeaving())
		}
	}
}

func TestSenderWithoutURLOnlyTracks(t *testing.T) {
	s, err := NewSender(Config{Service: "approval"})
	if err != nil {
		t.Fatal(err)
	}
	if s.Enabled() {
		t.Fatal("sender without URL claims to be enabled")
	}
	s.Service().Begin("job_20260101_001")
	if hb := s.Heartbeats(); len(hb) != 1 || hb[0].GetStatus() != heartbeatv1.AgentState_AGENT_STATE_BUSY {
		t.Fatalf("heartbeats = %v", hb)
	}
	if _, err := NewSender(Config{}); err == nil {
		t.Fatal("sender without service name accepted")
	}
}

// An unreachable heartbeat service is logged once per outage, not once per tick.
func TestSenderLogsOutageOnce(t *testing.T) {
	var buf testinfra.SyncBuffer
	srv := httptest.NewServer(http.NotFoundHandler())
	url := srv.URL
	srv.Close() // nothing listens there any more
	s, err := NewSender(Config{Service: "gateway-slack", URL: url, Interval: 10 * time.Millisecond,
		Logger: slog.New(slog.NewJSONHandler(&buf, nil))})
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	if err := s.Run(ctx); err != nil {
		t.Fatal(err)
	}
	if n := strings.Count(buf.String(), "heartbeat.send_failed"); n != 1 {
		t.Fatalf("logged %d send failures, want 1:\n%s", n, buf.String())
	}
}

// reportedFailure is a failure that says how a report shows it (as llm.Failure does).
type reportedFailure struct {
	code, detail string
	err          error
}

func (f reportedFailure) Error() string        { return f.err.Error() }
func (f reportedFailure) ReportCode() string   { return f.code }
func (f reportedFailure) ReportDetail() string { return f.detail }
