package policy

import (
	"context"
	"crypto/sha256"
	"fmt"
	"log/slog"
	"os"
	"sync"
	"sync/atomic"
	"time"

	"github.com/picoclaw-suite/picoclaw/services/approval/internal/domain"
)

// Load reads and compiles the policy file at path; "" is the shipped default.
func Load(path string) (*Policy, error) {
	if path == "" {
		return Parse(defaultPolicy)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("policy file: %w", err)
	}
	p, err := Parse(data)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return p, nil
}

// Holder is the policy in force. Reload replaces it with the file's current content; an
// invalid file keeps the previous policy, logs the error and calls onFailure (the metric).
type Holder struct {
	path      string
	log       *slog.Logger
	onFailure func()
	cur       atomic.Pointer[Policy]

	mu sync.Mutex
	// tried is the sha256 of the file content last compiled, good or bad: an unchanged invalid
	// file is reported once, not on every poll.
	tried [32]byte
}

// NewHolder loads the policy at path ("" is the default); an invalid policy is an error.
func NewHolder(path string, log *slog.Logger, onFailure func()) (*Holder, error) {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	if onFailure == nil {
		onFailure = func() {}
	}
	h := &Holder{path: path, log: log, onFailure: onFailure}
	data := defaultPolicy
	if path != "" {
		var err error
		if data, err = os.ReadFile(path); err != nil {
			return nil, fmt.Errorf("policy file: %w", err)
		}
	}
	p, err := Parse(data)
	if err != nil {
		if path == "" {
			path = "the default policy"
		}
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	h.cur.Store(p)
	h.tried = sha256.Sum256(data)
	return h, nil
}

// Current is the policy in force.
func (h *Holder) Current() *Policy { return h.cur.Load() }

// Evaluate decides with the policy in force.
func (h *Holder) Evaluate(cfg domain.PolicyConfig, in domain.PolicyInput, grant *domain.Grant, now time.Time) domain.Decision {
	return h.cur.Load().Evaluate(cfg, in, grant, now)
}

// Explain decides with the policy in force and returns the facts.
func (h *Holder) Explain(cfg domain.PolicyConfig, in domain.PolicyInput, grant *domain.Grant, now time.Time) (domain.Decision, map[string]any) {
	return h.cur.Load().Explain(cfg, in, grant, now)
}

// Reload reads the file again. force compiles even unchanged content (SIGHUP); without it an
// unchanged file is left alone (polling).
func (h *Holder) Reload(ctx context.Context, force bool) error {
	if h.path == "" {
		return nil
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	data, err := os.ReadFile(h.path)
	if err != nil {
		return h.failed(ctx, fmt.Errorf("policy file: %w", err))
	}
	sum := sha256.Sum256(data)
	if !force && sum == h.tried {
		return nil
	}
	h.tried = sum
	p, err := Parse(data)
	if err != nil {
		return h.failed(ctx, fmt.Errorf("%s: %w", h.path, err))
	}
	old := h.cur.Swap(p)
	if old.Hash() != p.Hash() {
		h.log.InfoContext(ctx, "approval.policy_reloaded", slog.String("policy_hash", p.Hash()), slog.String("previous_hash", old.Hash()),
			slog.Int("rules", len(p.rules)))
	}
	return nil
}

func (h *Holder) failed(ctx context.Context, err error) error {
	h.onFailure()
	h.log.ErrorContext(ctx, "approval.policy_reload_failed", slog.String("error", err.Error()),
		slog.String("policy_hash", h.cur.Load().Hash()))
	return err
}

// Watch reloads when the file changes (checked every interval) and on each signal from hup,
// until ctx ends.
func (h *Holder) Watch(ctx context.Context, every time.Duration, hup <-chan os.Signal) {
	if h.path == "" {
		return
	}
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			_ = h.Reload(ctx, false)
		case <-hup:
			_ = h.Reload(ctx, true)
		}
	}
}
