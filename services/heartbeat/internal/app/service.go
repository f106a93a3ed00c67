// Package app is the heartbeat service's use cases: receive beats, expire silent agents, build
// the report, watch changes and alert the admin once per incident.
package app

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/picoclaw-suite/picoclaw/services/heartbeat/internal/domain"
)

// Store keeps the latest picture of every agent.
type Store interface {
	// Update loads the agent (nil when unknown), calls fn and saves what fn returns (nothing
	// when it returns nil) atomically with respect to other updates of the same agent; fn may
	// run more than once.
	Update(ctx context.Context, agentID string, fn func(cur *domain.Agent) *domain.Agent) error
	// List returns every known agent.
	List(ctx context.Context) ([]domain.Agent, error)
}

// Env is what the use cases and the alerter take from their caller: the time zone of the times
// they show, the clock and the log. Left zero: UTC, time.Now and no log.
type Env struct {
	Location *time.Location
	Now      func() time.Time
	Logger   *slog.Logger
}

func (e *Env) setDefaults() {
	if e.Now == nil {
		e.Now = time.Now
	}
	if e.Logger == nil {
		e.Logger = slog.New(slog.DiscardHandler)
	}
	if e.Location == nil {
		e.Location = time.UTC
	}
}

// Config of the use cases.
type Config struct {
	Timeout time.Duration
	// SweepEvery is how often silent agents are looked for.
	SweepEvery time.Duration
	Env
}

// Service runs the use cases.
type Service struct {
	cfg     Config
	store   Store
	broker  *Broker
	alerter *Alerter
	started time.Time
}

// New returns the use cases; alerter may be nil (report_to_chat off).
func New(cfg Config, store Store, broker *Broker, alerter *Alerter) *Service {
	cfg.setDefaults()
	return &Service{cfg: cfg, store: store, broker: broker, alerter: alerter, started: cfg.Now()}
}

// Beat records one heartbeat.
func (s *Service) Beat(ctx context.Context, b domain.Beat) error {
	if err := b.Validate(); err != nil {
		return err
	}
	now := s.cfg.Now()
	var change *domain.Change
	err := s.store.Update(ctx, b.AgentID, func(cur *domain.Agent) *domain.Agent {
		next, ch := domain.Receive(cur, b, now)
		change = ch
		return &next
	})
	if err != nil {
		return fmt.Errorf("record beat of %s: %w", b.AgentID, err)
	}
	s.cfg.Logger.InfoContext(ctx, "heartbeat.received",
		slog.String("agent_id", b.AgentID), slog.String("alias", b.Alias), slog.String("agent_service", b.Service),
		slog.String("status", string(b.Status)), slog.Any("current_job_ids", b.JobIDs),
		slog.Float64("memory_usage_mb", b.MemoryMB), slog.Int64("last_task_duration_ms", b.LastTaskDurationMs))
	if change != nil {
		s.changed(ctx, *change)
	}
	return nil
}

// Sweep marks timeout every agent that has been silent for longer than the timeout.
func (s *Service) Sweep(ctx context.Context) error {
	agents, err := s.store.List(ctx)
	if err != nil {
		return fmt.Errorf("sweep: %w", err)
	}
	now := s.cfg.Now()
	for _, a := range agents {
		if !domain.Overdue(a, now, s.started, s.cfg.Timeout) {
			continue
		}
		var change *domain.Change
		err := s.store.Update(ctx, a.Last.AgentID, func(cur *domain.Agent) *domain.Agent {
			change = nil
			if cur == nil {
				return nil
			}
			next, ch := domain.Expire(*cur, now, s.started, s.cfg.Timeout)
			if ch == nil {
				return nil
			}
			change = ch
			return &next
		})
		if err != nil {
			return fmt.Errorf("sweep %s: %w", a.Last.AgentID, err)
		}
		if change != nil {
			s.changed(ctx, *change)
		}
	}
	return nil
}

// Run sweeps until ctx ends. A failed sweep is logged and retried at the next tick.
func (s *Service) Run(ctx context.Context) error {
	t := time.NewTicker(s.cfg.SweepEvery)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return nil
		case <-t.C:
		}
		if err := s.Sweep(ctx); err != nil && ctx.Err() == nil {
			s.cfg.Logger.ErrorContext(ctx, "heartbeat.sweep_failed", slog.String("error", err.Error()))
		}
	}
}

func (s *Service) changed(ctx context.Context, ch domain.Change) {
	a := ch.Agent
	attrs := []slog.Attr{
		slog.String("agent_id", a.Last.AgentID), slog.String("alias", a.Last.Alias), slog.String("agent_service", a.Last.Service),
		slog.String("state", string(a.State)), slog.String("previous_state", string(ch.Previous)),
		slog.Time("last_seen", a.LastSeen),
	}
	switch {
	case a.State == domain.StateTimeout:
		s.cfg.Logger.LogAttrs(ctx, slog.LevelWarn, "heartbeat.timeout", append(attrs, slog.Duration("timeout", s.cfg.Timeout))...)
	case a.State == domain.StateError:
		s.cfg.Logger.LogAttrs(ctx, slog.LevelWarn, "heartbeat.error", append(attrs, slog.String("error_message", a.Last.ErrorMessage))...)
	case ch.Alert() == domain.AlertRecovery:
		s.cfg.Logger.LogAttrs(ctx, slog.LevelInfo, "heartbeat.recovered", attrs...)
	default:
		s.cfg.Logger.LogAttrs(ctx, slog.LevelDebug, "heartbeat.state_changed", attrs...)
	}
	s.broker.Publish(ch)
	if s.alerter != nil && ch.Alert() != domain.AlertNone {
		s.alerter.Enqueue(ctx, ch)
	}
}

// Report is the aggregated picture.
type Report struct {
	Agents      []domain.Agent
	Text        string
	GeneratedAt time.Time
}

// Report builds the aggregated report. It sweeps first, so an agent that is overdue is shown
// (and stored, and alerted) as timeout without waiting for the next sweep.
func (s *Service) Report(ctx context.Context, locale Locale) (Report, error) {
	if err := s.Sweep(ctx); err != nil {
		return Report{}, fmt.Errorf("report: %w", err)
	}
	agents, err := s.store.List(ctx)
	if err != nil {
		return Report{}, fmt.Errorf("report: %w", err)
	}
	now := s.cfg.Now()
	counts := map[domain.State]int{}
	for _, a := range agents {
		counts[a.State]++
	}
	domain.Sort(agents)
	s.cfg.Logger.InfoContext(ctx, "heartbeat.aggregated",
		slog.Int("agents", len(agents)), slog.Int("idle", counts[domain.StateIdle]), slog.Int("busy", counts[domain.StateBusy]),
		slog.Int("error", counts[domain.StateError]), slog.Int("timeout", counts[domain.StateTimeout]))
	return Report{Agents: agents, Text: ReportText(locale, agents, now, s.cfg.Location), GeneratedAt: now}, nil
}

// Current lists every agent as the report shows it, for a watcher that wants the picture first.
func (s *Service) Current(ctx context.Context) ([]domain.Agent, error) {
	r, err := s.Report(ctx, LocaleJa)
	return r.Agents, err
}

// Watch subscribes to changes; cancel ends the subscription. The channel is closed when the
// subscriber falls too far behind, so it never misses a change silently.
func (s *Service) Watch() (<-chan domain.Change, func()) { return s.broker.Subscribe() }
