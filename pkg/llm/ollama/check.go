package ollama

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"time"

	"github.com/picoclaw-suite/picoclaw/pkg/llm"
)

// ModelStatus is what a check found about one configured model.
type ModelStatus struct {
	Model string `json:"model"`
	// Reachable: the server answered /api/tags.
	Reachable bool `json:"reachable"`
	Present   bool `json:"present"`
	// ContextLength is the trained context length, ModelNumCtx the model file's num_ctx (0 when
	// unknown or unset), NumCtx what the suite sends, MaxContext the configured limit.
	ContextLength int `json:"context_length,omitempty"`
	ModelNumCtx   int `json:"model_num_ctx,omitempty"`
	NumCtx        int `json:"num_ctx"`
	MaxContext    int `json:"max_context"`
	// Problem is "" when the model is usable, otherwise what is wrong; Fix says what to run.
	Problem string `json:"problem,omitempty"`
	Fix     string `json:"fix,omitempty"`
}

// OK reports whether the model is usable.
func (s ModelStatus) OK() bool { return s.Problem == "" }

// Check checks model on the server: reachable, present, and its context within maxContext
// (the num_ctx sent and the model file's) and within what the model was trained for.
func Check(ctx context.Context, api *API, model string, numCtx, maxContext int) ModelStatus {
	st := ModelStatus{Model: model, NumCtx: numCtx, MaxContext: maxContext}
	models, err := api.List(ctx)
	if err != nil {
		st.Problem = err.Error()
		st.Fix = "ollama serve"
		return st
	}
	st.Reachable = true
	if st.Present = Has(models, model); !st.Present {
		st.Problem = fmt.Sprintf("model %s is not installed on %s", model, api.BaseURL())
		st.Fix = SetupCommand
		return st
	}
	d, err := api.Show(ctx, model)
	if err != nil {
		st.Problem = err.Error()
		if errors.Is(err, llm.ErrModelUnavailable) {
			st.Present, st.Fix = false, SetupCommand
		}
		return st
	}
	st.ContextLength, st.ModelNumCtx = d.ContextLength, d.NumCtx
	switch {
	case maxContext > 0 && numCtx > maxContext:
		st.Problem = fmt.Sprintf("num_ctx %d exceeds max_context %d", numCtx, maxContext)
		st.Fix = "set ollama.num_ctx to at most ollama.max_context"
	case maxContext > 0 && d.NumCtx > maxContext:
		st.Problem = fmt.Sprintf("model %s sets num_ctx %d, above max_context %d", model, d.NumCtx, maxContext)
		st.Fix = SetupCommand + " --force"
	case d.ContextLength > 0 && numCtx > d.ContextLength:
		st.Problem = fmt.Sprintf("num_ctx %d exceeds the context length %d of model %s", numCtx, d.ContextLength, model)
		st.Fix = "lower ollama.num_ctx"
	}
	return st
}

// CheckAtStart checks the model of cfg (provider ollama; others are skipped) and logs the
// outcome for agent: llm.model_ready, or llm.model_unavailable with the command that fixes it.
// It never fails: a service with a missing model still starts and tells its users what to run.
func CheckAtStart(ctx context.Context, cfg llm.Config, agent string, log *slog.Logger) ModelStatus {
	cfg = cfg.WithDefaults()
	if cfg.Provider != llm.ProviderOllama {
		return ModelStatus{Model: cfg.Model}
	}
	ctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	st := Check(ctx, NewAPI(cfg.BaseURL, nil), cfg.Model, cfg.NumCtx, cfg.MaxContext)
	if st.OK() {
		log.InfoContext(ctx, "llm.model_ready", slog.String("agent", agent), slog.String("model", cfg.Model),
			slog.Int("context_length", st.ContextLength), slog.Int("model_num_ctx", st.ModelNumCtx), slog.Int("num_ctx", cfg.NumCtx))
		return st
	}
	log.WarnContext(ctx, "llm.model_unavailable", slog.String("agent", agent), slog.String("model", cfg.Model),
		slog.String("base_url", cfg.BaseURL), slog.String("problem", st.Problem), slog.String("fix", st.Fix))
	return st
}
