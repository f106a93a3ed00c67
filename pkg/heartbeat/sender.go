package heartbeat

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math"
	"net/http"
	"runtime"
	"sync"
	"time"

	"github.com/picoclaw-suite/picoclaw/pkg/idlemem"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/types/known/timestamppb"

	heartbeatv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/heartbeat/v1"
	"github.com/picoclaw-suite/picoclaw/gen/picoclaw/heartbeat/v1/heartbeatv1connect"
)

// Config configures a Sender.
type Config struct {
	// Service is the name of the service that runs the sender; it beats as an agent of kind
	// service under this name.
	Service string
	// Replica names this process among the service's replicas (rpcserver's Replica): the
	// heartbeat service tracks and alerts on every replica by itself.
	Replica string
	// URL is the heartbeat service's base URL. Empty disables sending; trackers keep working.
	URL string
	// Interval between beats (default 30 s).
	Interval time.Duration
	// ErrorHold: see Tracker.Snapshot (default DefaultErrorHold).
	ErrorHold time.Duration
	// HTTPClient carries the beats (default: a plain HTTP/1.1 client; Beat is unary).
	HTTPClient connect.HTTPClient
	// ClientOptions are added to the Connect client.
	ClientOptions []connect.ClientOption
	Logger        *slog.Logger
	// Now replaces time.Now (tests).
	Now func() time.Time
}

// Validate checks the configuration.
func (c Config) Validate() error {
	if c.Service == "" {
		return errors.New("heartbeat sender: service name is required")
	}
	if c.Interval < 0 {
		return fmt.Errorf("heartbeat sender: interval must not be negative, got %s", c.Interval)
	}
	return nil
}

// Sender beats for its service and every agent registered with it.
type Sender struct {
	cfg    Config
	client heartbeatv1connect.HeartbeatServiceClient
	self   *Agent

	mu     sync.Mutex
	agents []*Agent
	byID   map[string]*Agent

	failing bool
}

// NewSender returns a sender; Run starts beating.
func NewSender(cfg Config) (*Sender, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.Interval == 0 {
		cfg.Interval = 30 * time.Second
	}
	if cfg.ErrorHold <= 0 {
		cfg.ErrorHold = DefaultErrorHold
	}
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.HTTPClient == nil {
		cfg.HTTPClient = &http.Client{Timeout: cfg.Interval}
	}
	s := &Sender{
		cfg:  cfg,
		self: &Agent{Tracker: NewTracker(cfg.Now), ID: cfg.Service, Alias: cfg.Service, Kind: KindService},
		byID: map[string]*Agent{},
	}
	if cfg.URL != "" {
		s.client = heartbeatv1connect.NewHeartbeatServiceClient(cfg.HTTPClient, cfg.URL, cfg.ClientOptions...)
	}
	return s, nil
}

// Enabled reports whether the sender sends beats (a URL is configured).
func (s *Sender) Enabled() bool { return s.client != nil }

// Interval is the time between beats.
func (s *Sender) Interval() time.Duration { return s.cfg.Interval }

// Service is the tracker of the service itself.
func (s *Sender) Service() *Agent { return s.self }

// Agent registers (or returns the already registered) agent id hosted by this service.
func (s *Sender) Agent(id, alias string) *Agent {
	s.mu.Lock()
	defer s.mu.Unlock()
	if a, ok := s.byID[id]; ok {
		return a
	}
	a := &Agent{Tracker: NewTracker(s.cfg.Now), ID: id, Alias: alias, Kind: KindAgent}
	s.byID[id] = a
	s.agents = append(s.agents, a)
	return a
}

// Run beats right away and then every interval until ctx ends. A failed beat is logged and
// retried at the next tick; Run only returns when ctx ends. Its last beat says the replica is
// leaving, so a replica stopped on purpose is forgotten rather than reported as timed out.
func (s *Sender) Run(ctx context.Context) error {
	if s.client == nil {
		<-ctx.Done()
		return nil
	}
	tick := time.NewTicker(s.cfg.Interval)
	defer tick.Stop()
	for {
		s.beatAndLog(ctx)
		idlemem.Settle()
		select {
		case <-ctx.Done():
			s.leave(ctx)
			return nil
		case <-tick.C:
		}
	}
}

// leaveTimeout bounds the leaving beat during shutdown.
const leaveTimeout = 2 * time.Second

func (s *Sender) leave(ctx context.Context) {
	lctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), leaveTimeout)
	defer cancel()
	for _, hb := range s.Heartbeats() {
		hb.Leaving = true
		if _, err := s.client.Beat(lctx, &heartbeatv1.BeatRequest{Heartbeat: hb}); err != nil {
			s.cfg.Logger.InfoContext(ctx, "heartbeat.leave_failed", slog.String("agent_id", hb.GetAgentId()), slog.String("error", err.Error()))
			return
		}
	}
}

func (s *Sender) beatAndLog(ctx context.Context) {
	err := s.BeatOnce(ctx)
	if ctx.Err() != nil {
		return
	}
	// One warning per outage of the heartbeat service, not one per tick.
	switch {
	case err != nil && !s.failing:
		s.failing = true
		s.cfg.Logger.WarnContext(ctx, "heartbeat.send_failed", slog.String("url", s.cfg.URL), slog.String("error", err.Error()))
	case err == nil && s.failing:
		s.failing = false
		s.cfg.Logger.InfoContext(ctx, "heartbeat.send_recovered", slog.String("url", s.cfg.URL))
	}
}

// BeatOnce sends one beat for the service and one for each hosted agent.
func (s *Sender) BeatOnce(ctx context.Context) error {
	if s.client == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, s.cfg.Interval)
	defer cancel()
	var errs []error
	for _, hb := range s.Heartbeats() {
		if _, err := s.client.Beat(ctx, &heartbeatv1.BeatRequest{Heartbeat: hb}); err != nil {
			errs = append(errs, fmt.Errorf("beat %s: %w", hb.GetAgentId(), err))
		}
	}
	return errors.Join(errs...)
}

// Heartbeats builds the current beat of the service and of every hosted agent.
func (s *Sender) Heartbeats() []*heartbeatv1.Heartbeat {
	s.mu.Lock()
	agents := append([]*Agent{s.self}, s.agents...)
	s.mu.Unlock()
	mem := MemoryMB()
	now := timestamppb.New(s.cfg.Now())
	out := make([]*heartbeatv1.Heartbeat, 0, len(agents))
	for _, a := range agents {
		snap := a.Snapshot(s.cfg.ErrorHold)
		note, noteEN := a.Note()
		hb := &heartbeatv1.Heartbeat{
			AgentId:            a.ID,
			Alias:              a.Alias,
			Timestamp:          now,
			Status:             toProto(snap.Status),
			CurrentJobIds:      snap.JobIDs,
			MemoryUsageMb:      mem,
			LastTaskDurationMs: snap.LastTaskDuration.Milliseconds(),
			ErrorMessage:       snap.LastError,
			ErrorCode:          snap.LastErrorCode,
			Service:            s.cfg.Service,
			Kind:               string(a.Kind),
			Note:               note,
			NoteEn:             noteEN,
			ReplicaId:          s.cfg.Replica,
		}
		if len(snap.JobIDs) > 0 {
			hb.CurrentJobId = snap.JobIDs[0]
		}
		out = append(out, hb)
	}
	return out
}

func toProto(st Status) heartbeatv1.AgentState {
	switch st {
	case StatusBusy:
		return heartbeatv1.AgentState_AGENT_STATE_BUSY
	case StatusError:
		return heartbeatv1.AgentState_AGENT_STATE_ERROR
	default:
		return heartbeatv1.AgentState_AGENT_STATE_IDLE
	}
}

// MemoryMB is the memory the Go runtime holds from the OS (heap, stacks and runtime
// structures, minus what it already returned), in MB with one decimal. Agents hosted in one
// process share it.
func MemoryMB() float64 {
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	mb := float64(m.Sys-m.HeapReleased) / (1 << 20)
	return math.Round(mb*10) / 10
}
