package app

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"path/filepath"
	"sync"
	"testing"
	"time"

	"github.com/picoclaw-suite/picoclaw/pkg/llm"
	"github.com/picoclaw-suite/picoclaw/pkg/testinfra"
	"github.com/picoclaw-suite/picoclaw/services/router-shiro/internal/domain"
	"github.com/picoclaw-suite/picoclaw/services/router-shiro/internal/rules"
)

// fakeModel is a scripted llm.Client: each call takes the next answer. It can advance a fake
// clock per call so loop tests spend max_millis without waiting.
type fakeModel struct {
	mu       sync.Mutex
	answers  []fakeAnswer
	requests []llm.Request
	// deadlines holds each call's context deadline (zero: none).
	deadlines []time.Time
	cloud     bool
	clock     *fakeClock
	step      time.Duration
}

type fakeAnswer struct {
	text string
	err  error
}

func (m *fakeModel) Chat(ctx context.Context, req llm.Request) (*llm.Response, error) {
	m.mu.Lock()
	defer m.mu.Unlock()
	m.requests = append(m.requests, req)
	dl, _ := ctx.Deadline()
	m.deadlines = append(m.deadlines, dl)
	if m.clock != nil {
		m.clock.advance(m.step)
	}
	if len(m.answers) == 0 {
		return nil, errors.New("fake model: no answer scripted")
	}
	a := m.answers[0]
	if len(m.answers) > 1 {
		m.answers = m.answers[1:]
	}
	if a.err != nil {
		return nil, a.err
	}
	return &llm.Response{Text: a.text, Provider: "ollama", Model: "worker-v1:latest", Latency: time.Millisecond}, nil
}

func (m *fakeModel) Provider() string {
	if m.cloud {
		return "openai"
	}
	return "ollama"
}
func (m *fakeModel) Model() string { return "worker-v1:latest" }
func (m *fakeModel) Cloud() bool   { return m.cloud }

func (m *fakeModel) calls() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	return len(m.requests)
}

type fakeClock struct {
	mu sync.Mutex
	t  time.Time
}

func (c *fakeClock) now() time.Time {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.t
}

func (c *fakeClock) advance(d time.Duration) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.t = c.t.Add(d)
}

type fakeCoder struct {
	mu       sync.Mutex
	propose  []ProposeInput
	many     []ProposeManyInput
	proposal domain.Proposal
	results  []domain.ProposalResult
	err      error
}

func (c *fakeCoder) Propose(_ context.Context, in ProposeInput) (domain.Proposal, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.propose = append(c.propose, in)
	if c.err != nil {
		return domain.Proposal{}, c.err
	}
	p := c.proposal
	p.Order = in.Order
	return p, nil
}

func (c *fakeCoder) ProposeMany(_ context.Context, in ProposeManyInput) ([]domain.ProposalResult, error) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.many = append(c.many, in)
	return c.results, c.err
}

func (c *fakeCoder) calls() int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return len(c.propose) + len(c.many)
}

func defaultDictionary(t testing.TB) *rules.Dictionary {
	t.Helper()
	data, err := os.ReadFile(filepath.Join("..", "..", "..", "..", "config", "rules.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	d, err := rules.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	return d
}

func testConfig() Config {
	return Config{
		Thresholds:          domain.Thresholds{MinConfidence: 0.6, MinConfidenceForCode: 0.8},
		ClassifierEnabled:   true,
		ClassifierTimeout:   time.Second,
		Loop:                domain.LoopLimits{MaxLoops: 3, MaxMillis: 90 * time.Second, MinConfidence: 0.4},
		DefaultCodeOrder:    "order2",
		ForcedRoutes:        map[string]domain.Route{},
		DeliberationEnabled: true,
		DeliberationTimeout: 2 * time.Second,
		Locale:              "ja",
		HistoryTurns:        6,
	}
}

type harness struct {
	router *Router
	model  *fakeModel
	coder  *fakeCoder
	logs   *testinfra.SyncBuffer
	clock  *fakeClock
}

func newHarness(t *testing.T, cfg Config, answers ...fakeAnswer) *harness {
	t.Helper()
	h := &harness{
		model: &fakeModel{answers: answers},
		coder: &fakeCoder{proposal: domain.Proposal{Plan: "plan", Patch: "```go:main.go\npackage main\n```", Risk: domain.ProposalRisk{Level: domain.RiskLow}}},
		logs:  &testinfra.SyncBuffer{},
		clock: &fakeClock{t: time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)},
	}
	h.model.clock = h.clock
	log := slog.New(slog.NewJSONHandler(h.logs, &slog.HandlerOptions{Level: slog.LevelDebug}))
	r, err := New(cfg, defaultDictionary(t), h.model, h.coder, log, WithClock(h.clock.now))
	if err != nil {
		t.Fatal(err)
	}
	h.router = r
	return h
}

func text(s string) fakeAnswer { return fakeAnswer{text: s} }

func discardLogger() *slog.Logger { return slog.New(slog.DiscardHandler) }
