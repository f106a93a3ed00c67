package app

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/picoclaw-suite/picoclaw/pkg/jobid"
	"github.com/picoclaw-suite/picoclaw/pkg/llm"
	"github.com/picoclaw-suite/picoclaw/pkg/llm/providers"
	"github.com/picoclaw-suite/picoclaw/pkg/telemetry"
	"github.com/picoclaw-suite/picoclaw/services/coder-order/internal/domain"
)

const (
	testDeepSeekKey  = "sk-T3stDeepSeekK3yAbCdEfGhIjKlMnOpQr"
	testOpenAIKey    = "sk-proj-T3stOpenAIK3yAbCdEfGhIjKlMnOpQr"
	testAnthropicKey = "sk-ant-api03-T3stAnthropicK3yAbCdEfGhIj"
)

func keys(k string) (string, bool) {
	v, ok := map[string]string{"DEEPSEEK_API_KEY": testDeepSeekKey, "OPENAI_API_KEY": testOpenAIKey, "ANTHROPIC_API_KEY": testAnthropicKey}[k]
	return v, ok
}

func validAnswer(edits map[string]any) string {
	m := map[string]any{
		"job_id": "job_19990101_999", "plan": "README に使い方を追記する",
		"patch":         `[{"type":"file_edit","action":"update","target":"README.md","content":"# Usage\n"}]`,
		"risk":          map[string]any{"level": "low", "destructive": false, "compatibility_issues": []string{}, "rollback_possible": true, "notes": ""},
		"need_approval": false, "uses_browser": false, "task_type": "docs",
	}
	for k, v := range edits {
		if v == nil {
			delete(m, k)
		} else {
			m[k] = v
		}
	}
	b, _ := json.Marshal(m)
	return string(b)
}

type orderSpec struct {
	id, provider, url string
	retryMax          int
}

// newTestProposer builds real llm clients pointed at the fake servers.
func newTestProposer(t *testing.T, log *bytes.Buffer, limits Limits, timeout time.Duration, specs ...orderSpec) *Proposer {
	t.Helper()
	logger := telemetry.NewLogger(log, "debug", "coder-order")
	var orders []Order
	for _, s := range specs {
		cfg := llm.Config{Provider: s.provider, Model: map[string]string{"deepseek": "deepseek-chat", "openai": "gpt-4o", "anthropic": "claude-sonnet-4-5", "ollama": "coder-local:latest", "offline": "offline"}[s.provider],
			BaseURL: s.url, RetryMax: s.retryMax, TimeoutSec: 30, MaxTokens: 2000}
		c, err := providers.New(cfg, llm.WithLookupEnv(keys), llm.WithLogger(logger), llm.WithSleep(func(ctx context.Context, _ time.Duration) error { return ctx.Err() }))
		if err != nil {
			t.Fatal(err)
		}
		orders = append(orders, Order{ID: s.id, Alias: domain.Roles[s.id].Alias, Enabled: true, Client: c,
			Price: llm.Price{InputPerMTok: 2.5, OutputPerMTok: 10}, HasPrice: true, MaxTokens: 2000})
	}
	return NewProposer(Config{Orders: orders, DefaultOrder: domain.Order2, Limits: limits, MaxParallel: 3, DeliberationTimeout: timeout, Logger: logger})
}

func TestProposeValidFirstTime(t *testing.T) {
	f := newFakeModel(t, wireOpenAI, reply{text: validAnswer(nil)})
	var log bytes.Buffer
	p := newTestProposer(t, &log, Limits{CostUSD: 1, Tokens: 100000}, 0, orderSpec{id: "order2", provider: "openai", url: f.srv.URL})
	ctx := jobid.WithJobID(context.Background(), "job_20261121_042")
	prop, err := p.Propose(ctx, "coder2", Task{JobID: "job_20261121_000", Text: "README に使い方を書いて 連絡先 taro@example.com"})
	if err != nil {
		t.Fatal(err)
	}
	if prop.JobID != "job_20261121_042" {
		t.Errorf("job_id = %q, want the one from baggage", prop.JobID)
	}
	if prop.Order != "order2" || prop.Provider != "openai" || prop.Model != "gpt-4o" || prop.Repaired {
		t.Errorf("proposal meta = %+v", prop)
	}
	// 1000 in × $2.5/M + 500 out × $10/M.
	if prop.CostHint.EstimatedTokens != 1500 || prop.CostHint.EstimatedCostUSD != 0.0075 || prop.CostHint.NearLimit {
		t.Errorf("cost_hint = %+v", prop.CostHint)
	}
	reqs := f.requests()
	if len(reqs) != 1 {
		t.Fatalf("requests = %d", len(reqs))
	}
	raw, _ := json.Marshal(reqs[0])
	for _, want := range []string{"Ao (order2)", "cost_hint", "job_20261121_042", "json_object"} {
		if !strings.Contains(string(raw), want) {
			t.Errorf("request lacks %q: %s", want, raw)
		}
	}
	if strings.Contains(string(raw), "taro@example.com") {
		t.Error("e-mail address left for the cloud unmasked")
	}
	line := findLog(t, log.String(), "coder.plan_generated")
	if line["job_id"] != "job_20261121_042" || line["order"] != "order2" || line["input_tokens"] != float64(1000) || line["output_tokens"] != float64(500) || line["cost_usd"] != 0.0075 {
		t.Errorf("coder.plan_generated = %v", line)
	}
}

func findLog(t *testing.T, out, msg string) map[string]any {
	t.Helper()
	for _, l := range strings.Split(strings.TrimSpace(out), "\n") {
		var m map[string]any
		if json.Unmarshal([]byte(l), &m) == nil && m["msg"] == msg {
			return m
		}
	}
	t.Fatalf("no %s in log:\n%s", msg, out)
	return nil
}

func TestProposeRepairPath(t *testing.T) {
	f := newFakeModel(t, wireAnthropic, reply{text: validAnswer(map[string]any{"plan": nil, "task_type": "poem"})}, reply{text: validAnswer(nil)})
	var log bytes.Buffer
	p := newTestProposer(t, &log, Limits{CostUSD: 1, Tokens: 100000}, 0, orderSpec{id: "order3", provider: "anthropic", url: f.srv.URL})
	prop, err := p.Propose(context.Background(), "order3", Task{JobID: "job_20261121_043", Text: "認証まわりを見直して"})
	if err != nil {
		t.Fatal(err)
	}
	if !prop.Repaired || !prop.NeedApproval {
		t.Errorf("repaired=%v need_approval=%v; order3 is always approval-gated", prop.Repaired, prop.NeedApproval)
	}
	if prop.Usage.InputTokens != 2000 || prop.Usage.OutputTokens != 1000 {
		t.Errorf("usage must add both attempts: %+v", prop.Usage)
	}
	reqs := f.requests()
	if len(reqs) != 2 {
		t.Fatalf("requests = %d, want 2", len(reqs))
	}
	msgs := reqs[1]["messages"].([]any)
	last, _ := json.Marshal(msgs[len(msgs)-1])
	for _, want := range []string{"missing field plan", "task_type: must be one of"} {
		if !strings.Contains(string(last), want) {
			t.Errorf("repair request lacks %q: %s", want, last)
		}
	}
	if msgs[len(msgs)-2].(map[string]any)["role"] != "assistant" {
		t.Error("repair request must include the invalid answer")
	}
}

func TestProposeInvalidAfterRepairFails(t *testing.T) {
	f := newFakeModel(t, wireOpenAI,
		reply{text: "not json at all"},
		reply{text: validAnswer(map[string]any{"risk": nil, "patch": `[{"type":"file_edit","action":"explode","target":"a"}]`})},
		reply{text: validAnswer(nil)})
	var log bytes.Buffer
	p := newTestProposer(t, &log, Limits{}, 0, orderSpec{id: "order1", provider: "deepseek", url: f.srv.URL})
	_, err := p.Propose(context.Background(), "order1", Task{JobID: "job_20261121_044", Text: "x"})
	if !errors.Is(err, domain.ErrInvalidProposal) {
		t.Fatalf("err = %v", err)
	}
	msg := domain.UserMessage("ja", "order1", err)
	for _, want := range []string{"missing field risk", "patch: rejected by the patch parser"} {
		if !strings.Contains(msg, want) {
			t.Errorf("failure %q does not name %q", msg, want)
		}
	}
	if n := len(f.requests()); n != 2 {
		t.Errorf("requests = %d: one repair attempt only, the third answer must never be asked for", n)
	}
}

func TestProposeCostOverLimitRefusesBeforeCalling(t *testing.T) {
	f := newFakeModel(t, wireOpenAI, reply{text: validAnswer(nil)})
	var log bytes.Buffer
	for name, lim := range map[string]Limits{"cost": {CostUSD: 0.0000001}, "tokens": {Tokens: 10}} {
		p := newTestProposer(t, &log, lim, 0, orderSpec{id: "order2", provider: "openai", url: f.srv.URL})
		_, err := p.Propose(context.Background(), "", Task{JobID: "job_20261121_045", Text: strings.Repeat("長い依頼 ", 50)})
		if !errors.Is(err, domain.ErrCostOverLimit) || domain.Code(err) != "cost_over_limit" {
			t.Errorf("%s: err = %v", name, err)
		}
	}
	if len(f.requests()) != 0 {
		t.Error("a call was made although the prompt alone is over the limit")
	}
}

func TestProposeNearLimit(t *testing.T) {
	f := newFakeModel(t, wireOpenAI, reply{text: validAnswer(nil)})
	var log bytes.Buffer
	p := newTestProposer(t, &log, Limits{CostUSD: 0.008}, 0, orderSpec{id: "order2", provider: "openai", url: f.srv.URL})
	prop, err := p.Propose(context.Background(), "order2", Task{Text: "x"})
	if err != nil {
		t.Fatal(err)
	}
	if !prop.CostHint.NearLimit {
		t.Errorf("cost %v of limit 0.008 must be near_limit", prop.CostHint.EstimatedCostUSD)
	}
}

func TestProposeRefusals(t *testing.T) {
	f := newFakeModel(t, wireOpenAI, reply{text: validAnswer(nil)})
	var log bytes.Buffer
	p := newTestProposer(t, &log, Limits{}, 0, orderSpec{id: "order2", provider: "openai", url: f.srv.URL})
	cases := []struct {
		order string
		task  Task
		want  error
	}{
		{"order2", Task{Text: "x", LocalOnly: true}, domain.ErrLocalOnly},
		{"order9", Task{Text: "x"}, domain.ErrUnknownOrder},
		{"order1", Task{Text: "x"}, domain.ErrOrderDisabled},
		{"order2", Task{Text: "  "}, domain.ErrInvalidTask},
	}
	for _, tc := range cases {
		if _, err := p.Propose(context.Background(), tc.order, tc.task); !errors.Is(err, tc.want) {
			t.Errorf("%s %+v: err = %v, want %v", tc.order, tc.task, err, tc.want)
		}
	}
	if len(f.requests()) != 0 {
		t.Error("a refused proposal reached the provider")
	}
}

func TestProposeUnauthenticatedNotRetried(t *testing.T) {
	f := newFakeModel(t, wireOpenAI, reply{status: 401})
	var log bytes.Buffer
	p := newTestProposer(t, &log, Limits{}, 0, orderSpec{id: "order2", provider: "openai", url: f.srv.URL, retryMax: 2})
	_, err := p.Propose(context.Background(), "order2", Task{Text: "x"})
	if !errors.Is(err, llm.ErrUnauthenticated) || len(f.requests()) != 1 {
		t.Fatalf("err = %v after %d requests", err, len(f.requests()))
	}
}

func TestProposeManyTimeoutAndFailure(t *testing.T) {
	hang := newFakeModel(t, wireOpenAI, reply{hang: true})
	fail := newFakeModel(t, wireOpenAI, reply{status: 401})
	good := newFakeModel(t, wireAnthropic, reply{text: validAnswer(nil)})
	var log bytes.Buffer
	const deadline = 400 * time.Millisecond
	p := newTestProposer(t, &log, Limits{}, deadline,
		orderSpec{id: "order1", provider: "deepseek", url: hang.srv.URL},
		orderSpec{id: "order2", provider: "openai", url: fail.srv.URL},
		orderSpec{id: "order3", provider: "anthropic", url: good.srv.URL})
	ctx := jobid.WithJobID(context.Background(), "job_20261121_050")
	start := time.Now()
	results := p.ProposeMany(ctx, nil, Task{Text: "比較して"})
	elapsed := time.Since(start)
	if len(results) != 3 {
		t.Fatalf("results = %+v", results)
	}
	byOrder := map[string]Result{}
	for _, r := range results {
		byOrder[r.Order] = r
	}
	if r := byOrder["order1"]; r.Proposal != nil || domain.Code(r.Err) != "timeout" {
		t.Errorf("order1 = %+v (%v), want timeout", r, r.Err)
	}
	if r := byOrder["order2"]; r.Proposal != nil || domain.Code(r.Err) != "unauthenticated" {
		t.Errorf("order2 = %+v, want unauthenticated", r)
	}
	if r := byOrder["order3"]; r.Err != nil || r.Proposal == nil || r.Proposal.JobID != "job_20261121_050" {
		t.Errorf("order3 = %+v (%v), want a proposal", r, r.Err)
	}
	// The deliberation deadline bounds the whole call; the slack covers scheduling only.
	if elapsed > deadline+2*time.Second {
		t.Errorf("ProposeMany took %v with a %v deadline", elapsed, deadline)
	}
	findLog(t, log.String(), "deliberation.started")
	findLog(t, log.String(), "deliberation.proposal_received")
}

func TestProposeManyNamedOrdersAndLegacy(t *testing.T) {
	good := newFakeModel(t, wireOpenAI, reply{text: validAnswer(nil)})
	var log bytes.Buffer
	p := newTestProposer(t, &log, Limits{}, time.Second,
		orderSpec{id: "order1", provider: "deepseek", url: good.srv.URL},
		orderSpec{id: "order2", provider: "openai", url: good.srv.URL})
	results := p.ProposeMany(context.Background(), []string{"coder1", "order1", "order7"}, Task{Text: "x"})
	if len(results) != 2 || !errors.Is(results[0].Err, domain.ErrUnknownOrder) || results[1].Order != "order1" || results[1].Err != nil {
		t.Fatalf("results = %+v", results)
	}
}

func TestLogsHaveNoUnmaskedKeys(t *testing.T) {
	fail := newFakeModel(t, wireOpenAI, reply{status: 401})
	good := newFakeModel(t, wireAnthropic, reply{text: validAnswer(nil)})
	var log bytes.Buffer
	p := newTestProposer(t, &log, Limits{}, time.Second,
		orderSpec{id: "order2", provider: "openai", url: fail.srv.URL},
		orderSpec{id: "order3", provider: "anthropic", url: good.srv.URL})
	logger := telemetry.NewLogger(&log, "debug", "coder-order")
	for _, r := range p.ProposeMany(context.Background(), nil, Task{Text: "key is " + testOpenAIKey}) {
		if r.Err != nil {
			logger.Error("coder.order_failed", "error", r.Err)
		}
	}
	out := log.String()
	if out == "" {
		t.Fatal("nothing logged")
	}
	for _, key := range []string{testDeepSeekKey, testOpenAIKey, testAnthropicKey, "T3stOpenAIK3y", "T3stAnthropicK3y"} {
		if strings.Contains(out, key) {
			t.Fatalf("log contains %q unmasked:\n%s", key, out)
		}
	}
	for _, body := range append(fail.requests(), good.requests()...) {
		raw, _ := json.Marshal(body)
		if strings.Contains(string(raw), "T3stOpenAIK3y") {
			t.Fatal("a key in the task text left for a cloud model")
		}
	}
}

func TestProposeOfflineOrder(t *testing.T) {
	var log bytes.Buffer
	p := newTestProposer(t, &log, Limits{CostUSD: 1}, 0, orderSpec{id: "order1", provider: "offline"})
	ctx := jobid.WithJobID(context.Background(), "job_20261121_051")
	prop, err := p.Propose(ctx, "order1", Task{Text: "設計メモを書いて", LocalOnly: true})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(prop.Plan, llm.OfflineLabel) || prop.JobID != "job_20261121_051" || prop.Provider != "offline" {
		t.Errorf("offline proposal = %+v", prop)
	}
}

func TestProposeManyLimitsParallelism(t *testing.T) {
	good := newFakeModel(t, wireOpenAI, reply{text: validAnswer(nil), delay: 20 * time.Millisecond})
	var log bytes.Buffer
	p := newTestProposer(t, &log, Limits{}, 5*time.Second,
		orderSpec{id: "order1", provider: "deepseek", url: good.srv.URL},
		orderSpec{id: "order2", provider: "openai", url: good.srv.URL},
		orderSpec{id: "order3", provider: "openai", url: good.srv.URL})
	p.maxParallel = 1
	results := p.ProposeMany(context.Background(), nil, Task{Text: "x"})
	if len(results) != 3 {
		t.Fatalf("every enabled order must be asked, got %d results", len(results))
	}
	for _, r := range results {
		if r.Err != nil || r.Proposal == nil {
			t.Errorf("%s: %v", r.Order, r.Err)
		}
	}
	if n := good.srv.MaxInFlight(); n != 1 {
		t.Errorf("max in flight = %d, want 1", n)
	}
}

// The refusal carries the estimate a person is asked about; a task confirmed at that cost goes
// ahead (one call), and one confirmed at much less is refused again.
func TestProposeCostConfirmedGoesAheadAtTheConfirmedCost(t *testing.T) {
	f := newFakeModel(t, wireOpenAI, reply{text: validAnswer(nil)})
	var log bytes.Buffer
	p := newTestProposer(t, &log, Limits{Tokens: 10}, 0, orderSpec{id: "order2", provider: "openai", url: f.srv.URL})
	task := Task{JobID: "job_20261121_046", Text: strings.Repeat("長い依頼 ", 50)}
	_, err := p.Propose(context.Background(), "", task)
	est, ok := domain.EstimateOf(err)
	if !errors.Is(err, domain.ErrCostOverLimit) || !ok || est.Tokens <= 10 || est.CostUSD <= 0 {
		t.Fatalf("err = %v, estimate %+v (%t)", err, est, ok)
	}
	low := task
	low.ConfirmedTokens, low.ConfirmedCostUSD = est.Tokens/2, est.CostUSD/2
	if _, err := p.Propose(context.Background(), "", low); !errors.Is(err, domain.ErrCostOverLimit) {
		t.Fatalf("confirmed at half the estimate: err = %v", err)
	}
	if len(f.requests()) != 0 {
		t.Fatal("a call was made before the estimate was confirmed")
	}
	task.ConfirmedTokens, task.ConfirmedCostUSD = est.Tokens, est.CostUSD
	prop, err := p.Propose(context.Background(), "", task)
	if err != nil || prop == nil {
		t.Fatalf("confirmed: %v", err)
	}
	if len(f.requests()) != 1 {
		t.Fatalf("requests = %d, want 1", len(f.requests()))
	}
}
