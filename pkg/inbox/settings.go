package inbox

import (
	"context"
	"log/slog"
	"time"

	"github.com/picoclaw-suite/picoclaw/pkg/config"
	"github.com/picoclaw-suite/picoclaw/pkg/replica"
)

// Settings is the `inbox:` part of a gateway's config section.
type Settings struct {
	// Consumer names this process in the consumer group. It must differ between replicas; the
	// default is the process's replica id (replica_id, unique per process start unless set), so
	// a restart's events left pending are reclaimed after claim_idle. A name that is stable and
	// unique per replica (a StatefulSet pod name) resumes them at once.
	Consumer string `yaml:"consumer"`
	// Concurrency is how many chats are processed at the same time.
	Concurrency int `yaml:"concurrency"`
	// ClaimIdle: events another consumer left pending this long are taken over.
	ClaimIdle time.Duration `yaml:"claim_idle"`
	// MaxAge: an event that keeps failing for a transient reason (a peer or Redis down) is
	// retried until it is this old; then it goes to the dead-letter stream and the user is told.
	MaxAge time.Duration `yaml:"max_age"`
	// MaxAttempts, when positive, also bounds the attempts (0: only max_age).
	MaxAttempts int `yaml:"max_attempts"`
	// DedupeTTL is how long webhook event ids are remembered.
	DedupeTTL time.Duration `yaml:"dedupe_ttl"`
	// Block is how long one stream read waits for new events (also bounds shutdown).
	Block time.Duration `yaml:"block"`
}

// DefaultConcurrency is how many chats a gateway process handles at once by default. The
// local model's own bound (llm.Config.MaxParallel) keeps a slow model from being asked more at
// once; the other chats' events are read, stored answers sent and acknowledgements written
// meanwhile.
const DefaultConcurrency = 16

// DefaultSettings are the gateways' defaults.
func DefaultSettings() Settings {
	return Settings{Concurrency: DefaultConcurrency, ClaimIdle: 60 * time.Second, MaxAge: 24 * time.Hour, DedupeTTL: 24 * time.Hour, Block: time.Second}
}

// Validate names bad keys relative to the inbox section (prefix them with config.Prefix).
// Event ids must be remembered at least an hour: LINE and Slack redeliver for a while.
func (s Settings) Validate() error {
	var errs config.Errors
	if s.Concurrency <= 0 {
		errs.Addf("concurrency", "must be positive, got %d", s.Concurrency)
	}
	if s.ClaimIdle <= 0 {
		errs.Addf("claim_idle", "must be positive, got %s", s.ClaimIdle)
	}
	if s.MaxAttempts < 0 {
		errs.Addf("max_attempts", "must not be negative, got %d", s.MaxAttempts)
	}
	if s.MaxAge < time.Minute {
		errs.Addf("max_age", "must be at least 1m, got %s", s.MaxAge)
	}
	if s.Block <= 0 {
		errs.Addf("block", "must be positive, got %s", s.Block)
	}
	if s.DedupeTTL < time.Hour {
		errs.Addf("dedupe_ttl", "must be at least 1h (webhooks are redelivered for a while), got %s", s.DedupeTTL)
	}
	return errs.Err()
}

// ConsumerConfig is the consumer these settings describe; the name defaults to replicaID (the
// process's replica id), then to a new replica.NewID.
func (s Settings) ConsumerConfig(replicaID string, giveUp func(context.Context, Delivery, error), log *slog.Logger) ConsumerConfig {
	name := s.Consumer
	if name == "" {
		name = replica.Or(replicaID, "inbox")
	}
	return ConsumerConfig{Name: name, Concurrency: s.Concurrency, ClaimIdle: s.ClaimIdle, MaxAge: s.MaxAge, MaxAttempts: s.MaxAttempts,
		Block: s.Block, GiveUp: giveUp, Logger: log}
}
