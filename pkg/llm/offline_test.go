package llm

import (
	"context"
	"encoding/json"
	"strings"
	"testing"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
)

func TestOfflineContracts(t *testing.T) {
	ctx := context.Background()
	o := NewOffline()
	cases := []struct {
		name     string
		req      Request
		required []string
	}{
		{"classifier by hint", Request{Contract: ContractClassifier, JSON: true, Messages: []Message{{Role: RoleUser, Content: "main.go のバグを修正して"}}}, []string{"route", "confidence", "reason", "evidence"}},
		{"classifier by prompt", Request{JSON: true, Messages: []Message{{Role: RoleSystem, Content: `Answer {"route","confidence","reason","evidence"}`}, {Role: RoleUser, Content: "こんにちは"}}}, []string{"route", "confidence", "reason", "evidence"}},
		{"worker by prompt", Request{JSON: true, Messages: []Message{{Role: RoleSystem, Content: "keys: result, needs_next_loop, why"}, {Role: RoleUser, Content: "売上CSVを集計"}}}, []string{"result", "needs_next_loop", "why", "next_actions", "questions_for_user", "confidence", "risk"}},
		{"proposal by hint", Request{Contract: ContractProposal, JSON: true, Messages: []Message{{Role: RoleUser, Content: "job_id: job_20261121_007\nREADME を整える"}}}, []string{"job_id", "plan", "patch", "risk", "cost_hint", "need_approval", "uses_browser", "task_type"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			a, err := o.Chat(ctx, tc.req)
			if err != nil {
				t.Fatal(err)
			}
			b, err2 := o.Chat(ctx, tc.req)
			if err2 != nil || a.Text != b.Text {
				t.Fatal("offline answers must be deterministic")
			}
			var m map[string]any
			if err := json.Unmarshal([]byte(a.Text), &m); err != nil {
				t.Fatalf("invalid JSON %q: %v", a.Text, err)
			}
			for _, k := range tc.required {
				if _, ok := m[k]; !ok {
					t.Errorf("missing %q in %s", k, a.Text)
				}
			}
			if !strings.Contains(a.Text, "not a model") || !a.Offline || a.Provider != "offline" {
				t.Errorf("answer not labelled as offline: %+v", a)
			}
		})
	}
}

func TestOfflineClassifierDerivesFromInput(t *testing.T) {
	for in, want := range map[string]string{"main.go のバグを修正して": "CODE", "docker を再起動": "OPS", "こんにちは": "CHAT", "https://example.com を調べて": "RESEARCH"} {
		resp, err := NewOffline().Chat(context.Background(), Request{Contract: ContractClassifier, Messages: []Message{{Role: RoleUser, Content: in}}})
		if err != nil {
			t.Fatal(err)
		}
		var d struct {
			Route      string   `json:"route"`
			Confidence float64  `json:"confidence"`
			Evidence   []string `json:"evidence"`
		}
		if err := json.Unmarshal([]byte(resp.Text), &d); err != nil {
			t.Fatal(err)
		}
		if d.Route != want || d.Confidence < 0 || d.Confidence > 1 || (want != "CHAT" && len(d.Evidence) == 0) {
			t.Errorf("%q → %+v, want %s", in, d, want)
		}
	}
}

func TestOfflineProposalCarriesJobIDAndPatch(t *testing.T) {
	resp, _ := NewOffline().Chat(context.Background(), Request{Contract: ContractProposal, Messages: []Message{{Role: RoleUser, Content: "job_id: job_20261121_007\nREADME を整える"}}})
	var p struct {
		JobID string `json:"job_id"`
		Patch string `json:"patch"`
	}
	if err := json.Unmarshal([]byte(resp.Text), &p); err != nil {
		t.Fatal(err)
	}
	var cmds []map[string]any
	if p.JobID != "job_20261121_007" || json.Unmarshal([]byte(p.Patch), &cmds) != nil || len(cmds) != 1 || cmds[0]["type"] != "file_edit" {
		t.Errorf("proposal = %+v", p)
	}
}

func TestOfflineText(t *testing.T) {
	resp, err := NewOffline().Chat(context.Background(), Request{Messages: []Message{{Role: RoleUser, Content: "今日の予定は？"}}})
	if err != nil || !strings.HasPrefix(resp.Text, OfflineLabel) || !strings.Contains(resp.Text, "今日の予定は？") {
		t.Fatalf("resp = %+v err = %v", resp, err)
	}
}

func TestConfigValidateNamesKeys(t *testing.T) {
	cases := []struct {
		name string
		cfg  Config
		keys []string
	}{
		{"ok", Config{Provider: "openai", Model: "gpt-4o", RetryMax: 2}, nil},
		{"bad provider", Config{Provider: "gemini", Model: "x"}, []string{"provider"}},
		{"no model", Config{Provider: "ollama"}, []string{"model"}},
		{"bad url and retries", Config{Provider: "ollama", Model: "m", BaseURL: "ftp://x", RetryMax: -1}, []string{"base_url", "retry_max"}},
		{"num_ctx over max", Config{Provider: "ollama", Model: "m", NumCtx: 16384, MaxContext: 8192}, []string{"num_ctx"}},
		{"keep_alive", Config{Provider: "ollama", Model: "m", KeepAlive: "forever"}, []string{"keep_alive"}},
		{"negative price", Config{Provider: "openai", Model: "m", Prices: map[string]Price{"m": {InputPerMTok: -1}}}, []string{"prices.m"}},
		{"restart", Config{Provider: "ollama", Model: "m", RestartCommand: []string{" "}}, []string{"restart_command"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.cfg.Validate()
			if len(tc.keys) == 0 {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if err == nil {
				t.Fatal("want error")
			}
			for _, k := range tc.keys {
				if !strings.Contains(err.Error(), k+":") {
					t.Errorf("error %q does not name %s", err, k)
				}
			}
		})
	}
}

func TestRequireLocal(t *testing.T) {
	for p, ok := range map[string]bool{"ollama": true, "offline": true, "openai": false, "deepseek": false, "anthropic": false} {
		err := RequireLocal("agents.worker.provider", Config{Provider: p, Model: "m"})
		if (err == nil) != ok {
			t.Errorf("%s: err = %v", p, err)
		}
		if err != nil && !strings.Contains(err.Error(), "agents.worker.provider") {
			t.Errorf("error does not name the key: %v", err)
		}
	}
}

func TestPriceCostAndDefaults(t *testing.T) {
	p := Price{InputPerMTok: 3, OutputPerMTok: 15}
	if got := p.Cost(Usage{InputTokens: 1_000_000, OutputTokens: 100_000}); got != 4.5 {
		t.Errorf("cost = %v", got)
	}
	c := Config{Provider: "ollama", Model: "m"}.WithOllama(OllamaSettings{BaseURL: "http://o:1", NumCtx: 2048, MaxContext: 4096}).WithDefaults()
	if c.BaseURL != "http://o:1" || c.NumCtx != 2048 || c.KeepAlive != "-1" || c.TimeoutSec != 60 {
		t.Errorf("defaults = %+v", c)
	}
	a := Config{Provider: "anthropic", Model: "m"}.WithDefaults()
	if a.APIKeyEnv != "ANTHROPIC_API_KEY" || a.BaseURL != DefaultAnthropicURL || a.MaxTokens != 16000 {
		t.Errorf("anthropic defaults = %+v", a)
	}
}

func TestMetricsObserve(t *testing.T) {
	reg := prometheus.NewRegistry()
	m := NewMetrics(reg)
	m2 := NewMetrics(reg) // a second registration reuses the collectors
	m.Observe(context.Background(), Call{Provider: "openai", Model: "gpt-4o", Usage: Usage{10, 5}})
	m2.Observe(context.Background(), Call{Provider: "openai", Model: "gpt-4o", Err: ErrUnauthenticated})
	if got := testutil.ToFloat64(m.calls.WithLabelValues("openai", "gpt-4o", "unauthenticated")); got != 1 {
		t.Errorf("error calls = %v", got)
	}
	if got := testutil.ToFloat64(m.tokens.WithLabelValues("openai", "gpt-4o", "input")); got != 10 {
		t.Errorf("input tokens = %v", got)
	}
}

func TestLocalAgent(t *testing.T) {
	o := DefaultOllamaSettings()
	o.BaseURL = "http://ollama:11434"
	c, err := LocalAgent("agents.chat", DefaultChatAgent(), o)
	if err != nil || c.BaseURL != "http://ollama:11434" || c.NumCtx != DefaultNumCtx || c.Model != "chat-v1:latest" {
		t.Fatalf("c = %+v err = %v", c, err)
	}
	_, err = LocalAgent("agents.worker", Agent{Config: Config{Provider: "anthropic", Model: "claude"}}, o)
	if err == nil || !strings.Contains(err.Error(), "agents.worker.provider") {
		t.Fatalf("cloud worker err = %v", err)
	}
	_, err = LocalAgent("agents.chat", Agent{Config: Config{Provider: "ollama"}}, o)
	if err == nil || !strings.Contains(err.Error(), "agents.chat.model") {
		t.Fatalf("missing model err = %v", err)
	}
}
