// Package app is the heartbeat service's use cases: receive beats, expire silent agents, build
// the report, watch changes and alert the admin once per incident.
package app

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/picoclaw-suite/picoclaw/pkg/idlemem"

	"github.com/picoclaw-suite/picoclaw/services/heartbeat/internal/domain"
)

// Store keeps the latest picture of every agent.
type Store interface {
	// Update loads the agent stored under key (domain.Beat.Key; nil when unknown), calls fn and
	// saves what fn returns (nothing when it returns nil) atomically with respect to other
	// updates of the same key; fn may run more than once.
	Update(ctx context.Context, key string, fn func(cur *domain.Agent) *domain.Agent) error
	// Delete forgets the agent stored under key and returns it (nil when there was none).
	Delete(ctx context.Context, key string) (*domain.Agent, error)
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
	// Hysteresis decides when an incident opens and closes (zero: at the first observation).
	Hysteresis domain.Hysteresis
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
	if b.Leaving {
		return s.leave(ctx, b, now)
	}
	var change *domain.Change
	first := false
	err := s.store.Update(ctx, b.Key(), func(cur *domain.Agent) *domain.Agent {
		next, ch := domain.Receive(cur, b, now, s.cfg.Hysteresis)
		change, first = ch, cur == nil
		return &next
	})
	if err != nil {
		return fmt.Errorf("record beat of %s: %w", b.Key(), err)
	}
	s.cfg.Logger.InfoContext(ctx, "heartbeat.received",
		slog.String("agent_id", b.AgentID), slog.String("replica", b.Replica), slog.String("alias", b.Alias), slog.String("agent_service", b.Service),
		slog.String("status", string(b.Status)), slog.Any("current_job_ids", b.JobIDs),
		slog.Float64("memory_usage_mb", b.MemoryMB), slog.Int64("last_task_duration_ms", b.LastTaskDurationMs))
	if change != nil {
		s.changed(ctx, *change)
	}
	if first && b.Replica != "" {
		s.replaceGone(ctx, b)
	}
	return nil
}

// others lists the agent's other replicas.
func (s *Service) others(ctx context.Context, b domain.Beat) ([]domain.Agent, error) {
	all, err := s.store.List(ctx)
	if err != nil {
		return nil, err
	}
	var out []domain.Agent
	for _, a := range all {
		if a.Last.AgentID == b.AgentID && a.Last.Key() != b.Key() {
			out = append(out, a)
		}
	}
	return out, nil
}

// replaceGone: a replica seen for the first time takes the place of the agent's replicas that
// are gone (timed out, stopped on purpose, or entries of a sender that named no replica), so a
// restart under a new replica id closes the old one's incident instead of leaving it open.
func (s *Service) replaceGone(ctx context.Context, b domain.Beat) {
	others, err := s.others(ctx, b)
	if err != nil {
		s.cfg.Logger.WarnContext(ctx, "heartbeat.replace_failed", slog.String("agent_id", b.AgentID), slog.String("error", err.Error()))
		return
	}
	for _, a := range others {
		if a.Gone() {
			s.forget(ctx, a, b.Replica)
		}
	}
}

// replacement names a live replica of a's agent that started after a's last beat ("" when none).
func replacement(agents []domain.Agent, a domain.Agent) string {
	for _, o := range agents {
		if o.Replaces(a) {
			return o.Last.Replica
		}
	}
	return ""
}

// forget removes replica a, which replica by replaced; an incident it had open ends.
func (s *Service) forget(ctx context.Context, a domain.Agent, by string) {
	gone, err := s.store.Delete(ctx, a.Last.Key())
	if err != nil {
		s.cfg.Logger.WarnContext(ctx, "heartbeat.replace_failed", slog.String("agent_id", a.Last.AgentID), slog.String("error", err.Error()))
		return
	}
	if gone == nil {
		return
	}
	s.cfg.Logger.InfoContext(ctx, "heartbeat.replaced", slog.String("agent_id", a.Last.AgentID), slog.String("replica", gone.Last.Replica),
		slog.String("by", by), slog.String("state", string(gone.State)))
	if ch := domain.Replace(*gone, by); ch != nil {
		s.changed(ctx, *ch)
	}
}

// leave handles a replica stopping on purpose. While other replicas of its agent run on it is
// forgotten at once; the last one stays and times out like any silent agent (the service is
// down), until a new replica takes its place.
func (s *Service) leave(ctx context.Context, b domain.Beat, now time.Time) error {
	others, err := s.others(ctx, b)
	if err != nil {
		return fmt.Errorf("leave of %s: %w", b.Key(), err)
	}
	running := false
	for _, a := range others {
		running = running || !a.Gone()
	}
	if !running {
		err := s.store.Update(ctx, b.Key(), func(cur *domain.Agent) *domain.Agent {
			if cur == nil {
				return nil
			}
			next := *cur
			next.Last.Leaving = true
			return &next
		})
		if err != nil {
			return fmt.Errorf("leave of %s: %w", b.Key(), err)
		}
		s.cfg.Logger.InfoContext(ctx, "heartbeat.last_replica_left", slog.String("agent_id", b.AgentID), slog.String("replica", b.Replica))
		return nil
	}
	gone, err := s.store.Delete(ctx, b.Key())
	if err != nil {
		return fmt.Errorf("forget %s: %w", b.Key(), err)
	}
	if gone == nil {
		return nil
	}
	s.cfg.Logger.InfoContext(ctx, "heartbeat.left", slog.String("agent_id", b.AgentID), slog.String("replica", b.Replica),
		slog.String("agent_service", b.Service), slog.String("state", string(gone.State)))
	if ch := domain.Leave(*gone); ch != nil {
		s.changed(ctx, *ch)
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
		if by := replacement(agents, a); by != "" {
			// Restarted under a new replica id without saying goodbye: the newer replica took
			// its place, nothing died.
			s.forget(ctx, a, by)
			continue
		}
		var change *domain.Change
		err := s.store.Update(ctx, a.Last.Key(), func(cur *domain.Agent) *domain.Agent {
			change = nil
			if cur == nil {
				return nil
			}
			next, ch := domain.Expire(*cur, now, s.started, s.cfg.Timeout, s.cfg.Hysteresis)
			if ch == nil {
				return nil
			}
			change = ch
			return &next
		})
		if err != nil {
			return fmt.Errorf("sweep %s: %w", a.Last.Key(), err)
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
		idlemem.Settle()
	}
}

func (s *Service) changed(ctx context.Context, ch domain.Change) {
	if ch.Alert() != domain.AlertNone {
		ch.ShowReplica = ch.Alert() == domain.AlertLeft || s.replicated(ctx, ch.Agent, ch.Alert() == domain.AlertReplaced)
	}
	a := ch.Agent
	attrs := []slog.Attr{
		slog.String("agent_id", a.Last.AgentID), slog.String("replica", a.Last.Replica), slog.String("alias", a.Last.Alias),
		slog.String("agent_service", a.Last.Service), slog.String("state", string(a.State)), slog.String("previous_state", string(ch.Previous)),
		slog.Time("last_seen", a.LastSeen), slog.Bool("incident_open", !a.IncidentSince.IsZero()),
	}
	switch {
	case ch.Alert() == domain.AlertLeft:
		s.cfg.Logger.LogAttrs(ctx, slog.LevelInfo, "heartbeat.incident_ended", attrs...)
	case ch.Alert() == domain.AlertReplaced:
		s.cfg.Logger.LogAttrs(ctx, slog.LevelInfo, "heartbeat.recovered", append(attrs, slog.String("replaced_by", ch.ReplacedBy))...)
	case !ch.StateMoved():
		// The incident opened or closed on a beat like the last one: the hysteresis decided.
		s.cfg.Logger.LogAttrs(ctx, slog.LevelInfo, "heartbeat.incident_"+map[domain.AlertKind]string{domain.AlertIncident: "opened", domain.AlertRecovery: "closed"}[ch.Alert()], attrs...)
	case a.State == domain.StateTimeout:
		s.cfg.Logger.LogAttrs(ctx, slog.LevelWarn, "heartbeat.timeout", append(attrs, slog.Duration("timeout", s.cfg.Timeout))...)
	case a.State == domain.StateError:
		s.cfg.Logger.LogAttrs(ctx, slog.LevelWarn, "heartbeat.error", append(attrs, slog.String("error_message", a.Last.ErrorMessage),
			slog.String("error_code", a.Last.ErrorCode))...)
	case ch.Alert() == domain.AlertRecovery:
		s.cfg.Logger.LogAttrs(ctx, slog.LevelInfo, "heartbeat.recovered", attrs...)
	default:
		s.cfg.Logger.LogAttrs(ctx, slog.LevelDebug, "heartbeat.state_changed", attrs...)
	}
	if ch.StateMoved() && ch.Alert() != domain.AlertLeft && ch.Alert() != domain.AlertReplaced {
		s.broker.Publish(ch)
	}
	if s.alerter != nil && ch.Alert() != domain.AlertNone {
		s.alerter.Enqueue(ctx, ch)
	}
}

// replicated reports whether a's agent runs as several replicas: another entry is stored
// besides a, or, when a was replaced (and removed), besides its replacement. Then texts name the
// replica (a store error counts as yes: naming it is never wrong).
func (s *Service) replicated(ctx context.Context, a domain.Agent, replaced bool) bool {
	all, err := s.store.List(ctx)
	if err != nil {
		return true
	}
	others := 0
	for _, o := range all {
		if o.Last.AgentID == a.Last.AgentID && o.Last.Key() != a.Last.Key() {
			others++
		}
	}
	if replaced {
		return others > 1
	}
	return others > 0
}

// Report is the aggregated picture.
type Report struct {
	Agents      []domain.Agent
	Text        string
	GeneratedAt time.Time
	// Locale is the language of Text.
	Locale Locale
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
	return Report{Agents: agents, Text: ReportText(locale, agents, now, s.cfg.Location), GeneratedAt: now, Locale: locale}, nil
}

// Current lists every agent as the report shows it, for a watcher that wants the picture first.
func (s *Service) Current(ctx context.Context) ([]domain.Agent, error) {
	r, err := s.Report(ctx, LocaleJa)
	return r.Agents, err
}

// Watch subscribes to changes; cancel ends the subscription. The channel is closed when the
// subscriber falls too far behind, so it never misses a change silently.
func (s *Service) Watch() (<-chan domain.Change, func()) { return s.broker.Subscribe() }
