package ollama

import (
	"context"
	"errors"
	"log/slog"
	"strconv"
	"time"

	"github.com/picoclaw-suite/picoclaw/pkg/fault"
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
	// Problem is "" when the model is usable, otherwise what is wrong; Fix says what to run or
	// change. Both are English (logs, JSON); ProblemText and FixText say them in a locale.
	Problem string `json:"problem,omitempty"`
	Fix     string `json:"fix,omitempty"`
	// ProblemCode is the code of Problem in CheckTexts ("" for none); problemArgs its arguments.
	ProblemCode string `json:"problem_code,omitempty"`
	problemArgs []string
	// fixCode is the code of Fix in CheckTexts when it is words, not a command to type.
	fixCode string
}

// CheckTexts are what a check finds and what fixes it, in Japanese and English, by code.
var CheckTexts = fault.Catalog{
	ProblemUnreachable:     {"Ollama に接続できません（%[1]s）", "Ollama is not reachable: %[1]s"},
	ProblemNotInstalled:    {"モデル %[1]s が %[2]s にインストールされていません", "model %[1]s is not installed on %[2]s"},
	ProblemUnreadable:      {"モデル %[1]s の情報を読めません（%[2]s）", "model %[1]s could not be read: %[2]s"},
	ProblemNumCtxOverMax:   {"num_ctx %[1]s が max_context %[2]s を超えています", "num_ctx %[1]s exceeds max_context %[2]s"},
	ProblemModelCtxOverMax: {"モデル %[1]s の num_ctx %[2]s が max_context %[3]s を超えています", "model %[1]s sets num_ctx %[2]s, above max_context %[3]s"},
	ProblemCtxOverTrained:  {"num_ctx %[1]s がモデル %[3]s のコンテキスト長 %[2]s を超えています", "num_ctx %[1]s exceeds the context length %[2]s of model %[3]s"},
	fixNumCtxAtMostMax:     {"ollama.num_ctx を ollama.max_context 以下にしてください", "set ollama.num_ctx to at most ollama.max_context"},
	fixLowerNumCtx:         {"ollama.num_ctx を下げてください", "lower ollama.num_ctx"},
}

// The codes of CheckTexts.
const (
	ProblemUnreachable     = "MODEL_UNREACHABLE"
	ProblemNotInstalled    = "MODEL_NOT_INSTALLED"
	ProblemUnreadable      = "MODEL_UNREADABLE"
	ProblemNumCtxOverMax   = "NUM_CTX_OVER_MAX_CONTEXT"
	ProblemModelCtxOverMax = "MODEL_NUM_CTX_OVER_MAX_CONTEXT"
	ProblemCtxOverTrained  = "NUM_CTX_OVER_CONTEXT_LENGTH"
	fixNumCtxAtMostMax     = "FIX_NUM_CTX_AT_MOST_MAX"
	fixLowerNumCtx         = "FIX_LOWER_NUM_CTX"
)

// problem sets the problem found: its code and arguments, and its English text.
func (s *ModelStatus) problem(code string, args ...string) {
	s.ProblemCode, s.problemArgs = code, args
	s.Problem = CheckTexts.Text("en", code, args...)
}

// fix sets the fix that is words (its English text in Fix).
func (s *ModelStatus) fix(code string) {
	s.fixCode, s.Fix = code, CheckTexts.Text("en", code)
}

// ProblemText is Problem in locale (Japanese unless "en…").
func (s ModelStatus) ProblemText(locale string) string {
	if s.ProblemCode == "" || s.problemArgs == nil {
		return s.Problem
	}
	return CheckTexts.Text(locale, s.ProblemCode, s.problemArgs...)
}

// FixText is Fix in locale: a command stays as it is typed.
func (s ModelStatus) FixText(locale string) string {
	if s.fixCode == "" {
		return s.Fix
	}
	return CheckTexts.Text(locale, s.fixCode)
}

// OK reports whether the model is usable.
func (s ModelStatus) OK() bool { return s.Problem == "" }

// Check checks model on the server: reachable, present, and its context within maxContext
// (the num_ctx sent and the model file's) and within what the model was trained for.
func Check(ctx context.Context, api *API, model string, numCtx, maxContext int) ModelStatus {
	st := ModelStatus{Model: model, NumCtx: numCtx, MaxContext: maxContext}
	models, err := api.List(ctx)
	if err != nil {
		st.problem(ProblemUnreachable, err.Error())
		st.Problem = err.Error() // as the server's client said it
		st.Fix = "ollama serve"
		return st
	}
	st.Reachable = true
	if st.Present = Has(models, model); !st.Present {
		st.problem(ProblemNotInstalled, model, api.BaseURL())
		st.Fix = SetupCommand
		return st
	}
	d, err := api.Show(ctx, model)
	if err != nil {
		st.problem(ProblemUnreadable, model, err.Error())
		st.Problem = err.Error()
		if errors.Is(err, llm.ErrModelUnavailable) {
			st.Present, st.Fix = false, SetupCommand
		}
		return st
	}
	st.ContextLength, st.ModelNumCtx = d.ContextLength, d.NumCtx
	switch {
	case maxContext > 0 && numCtx > maxContext:
		st.problem(ProblemNumCtxOverMax, strconv.Itoa(numCtx), strconv.Itoa(maxContext))
		st.fix(fixNumCtxAtMostMax)
	case maxContext > 0 && d.NumCtx > maxContext:
		st.problem(ProblemModelCtxOverMax, model, strconv.Itoa(d.NumCtx), strconv.Itoa(maxContext))
		st.Fix = SetupCommand + " --force"
	case d.ContextLength > 0 && numCtx > d.ContextLength:
		st.problem(ProblemCtxOverTrained, strconv.Itoa(numCtx), strconv.Itoa(d.ContextLength), model)
		st.fix(fixLowerNumCtx)
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
