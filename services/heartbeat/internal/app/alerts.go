package app

import (
	"context"
	"fmt"
	"log/slog"
	"time"

	"github.com/google/uuid"

	"github.com/picoclaw-suite/picoclaw/services/heartbeat/internal/domain"
)

// Alert is one push to the admin.
type Alert struct {
	AgentID string
	Kind    domain.AlertKind
	Text    string
	// RetryKey is the same for every delivery attempt of this alert, so the gateway delivers it
	// once even when an attempt timed out after the push went through.
	RetryKey string
}

// Notifier delivers an alert to the admin session.
type Notifier interface {
	Notify(ctx context.Context, a Alert) error
}

// AlertConfig configures the alerter.
type AlertConfig struct {
	Locale  Locale
	Timeout time.Duration
	// Attempts per alert (default 3), spaced by Backoff (default 1 s, doubling).
	Attempts int
	Backoff  time.Duration
	Env
}

// alertQueue bounds alerts waiting for delivery; beyond it the oldest news is not worth a
// pile-up behind a dead gateway.
const alertQueue = 128

// Alerter delivers alerts in order, off the beat path, so a slow gateway never slows beats.
type Alerter struct {
	cfg AlertConfig
	n   Notifier
	q   chan Alert
}

// NewAlerter returns an alerter; Run delivers.
func NewAlerter(cfg AlertConfig, n Notifier) *Alerter {
	if cfg.Attempts <= 0 {
		cfg.Attempts = 3
	}
	if cfg.Backoff <= 0 {
		cfg.Backoff = time.Second
	}
	cfg.setDefaults()
	return &Alerter{cfg: cfg, n: n, q: make(chan Alert, alertQueue)}
}

// Enqueue turns an incident or recovery into an alert.
func (a *Alerter) Enqueue(ctx context.Context, ch domain.Change) {
	kind := ch.Alert()
	if kind == domain.AlertNone {
		return
	}
	suffix := map[domain.AlertKind]string{domain.AlertIncident: "incident", domain.AlertRecovery: "recovery", domain.AlertLeft: "left", domain.AlertReplaced: "replaced"}[kind]
	key := fmt.Sprintf("heartbeat/%s/%d/%s", ch.Agent.Last.Key(), ch.IncidentSince.UnixNano(), suffix)
	al := Alert{
		AgentID:  ch.Agent.Last.Key(),
		Kind:     kind,
		Text:     AlertText(a.cfg.Locale, ch, a.cfg.Now(), a.cfg.Timeout, a.cfg.Location),
		RetryKey: uuid.NewSHA1(uuid.NameSpaceURL, []byte(key)).String(),
	}
	select {
	case a.q <- al:
	default:
		a.cfg.Logger.ErrorContext(ctx, "heartbeat.alert_dropped", slog.String("agent_id", al.AgentID), slog.String("reason", "queue full"))
	}
}

// Run delivers queued alerts until ctx ends.
func (a *Alerter) Run(ctx context.Context) error {
	for {
		select {
		case <-ctx.Done():
			return nil
		case al := <-a.q:
			a.deliver(ctx, al)
		}
	}
}

func (a *Alerter) deliver(ctx context.Context, al Alert) {
	wait := a.cfg.Backoff
	var err error
	for attempt := 1; attempt <= a.cfg.Attempts; attempt++ {
		if err = a.n.Notify(ctx, al); err == nil {
			a.cfg.Logger.InfoContext(ctx, "heartbeat.alert_sent", slog.String("agent_id", al.AgentID), slog.Int("attempt", attempt))
			return
		}
		if attempt == a.cfg.Attempts {
			break
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		}
		wait *= 2
	}
	a.cfg.Logger.ErrorContext(ctx, "heartbeat.alert_failed", slog.String("agent_id", al.AgentID), slog.String("error", err.Error()))
}
