package app

import (
	"context"
	"errors"
	"log/slog"
	"time"

	"github.com/picoclaw-suite/picoclaw/services/router-shiro/internal/domain"
)

// Result is the outcome of processing one task.
type Result struct {
	Outcome
	InitialRoute  domain.Route
	FinalRoute    domain.Route
	WorkerOutputs []domain.WorkerOutput
	StopReason    domain.StopReason
	Questions     []string
	WorkerCalls   int
	RerouteUsed   bool
	Proposals     []domain.ProposalResult
	Comparison    *domain.Comparison
	// ErrorReason says why the route's work failed (worker failure, coder-order unreachable).
	ErrorReason string
	LoopMillis  int64
}

// ProcessTask decides the route and runs it: CHAT goes back to chat-mio with the decision,
// PLAN/ANALYZE/OPS/RESEARCH run on the worker model under loop control, CODE routes ask
// coder-order, /deliberate asks every order and compares. It fails only when ctx ends.
func (r *Router) ProcessTask(ctx context.Context, in Input) (Result, error) {
	res := Result{Outcome: r.Decide(ctx, in)}
	res.InitialRoute = res.Decision.Route
	res.FinalRoute = res.Decision.Route
	task := in
	task.Text = res.TaskText
	switch {
	case res.Refusal != "":
	case res.TaskText == "" && res.Decision.Route != domain.RouteChat:
		// "/code" alone: there is nothing to work on, so ask instead of spending a model call.
		res.StopReason = domain.StopNeedUserConfirmation
		res.Questions = []string{askForTask(res.Decision.Matched, r.locale(in))}
	case res.Deliberation:
		r.deliberate(ctx, task, &res)
	case res.Decision.Route.IsCode():
		r.propose(ctx, task, res.Decision.Route, &res)
	case res.Decision.Route.IsWorker():
		if err := r.runLoop(ctx, task, &res); err != nil {
			return Result{}, err
		}
	}
	if err := ctx.Err(); err != nil {
		return Result{}, err
	}
	r.logFinal(ctx, in, &res)
	return res, nil
}

func (r *Router) logFinal(ctx context.Context, in Input, res *Result) {
	attrs := []slog.Attr{
		jobAttr(in),
		slog.String("initial_route", string(res.InitialRoute)),
		slog.String("final_route", string(res.FinalRoute)),
		slog.String("source", string(res.Decision.Source)),
		slog.Int("worker_calls", res.WorkerCalls),
		slog.Bool("reroute_used", res.RerouteUsed),
		slog.String("stop_reason", string(res.StopReason)),
		slog.Bool("refused", res.Refusal != ""),
		slog.Bool("deliberation", res.Deliberation),
		slog.Int("proposals", len(res.Proposals)),
	}
	if c := res.Classifier; c != nil {
		attrs = append(attrs, slog.String("classifier_route", string(c.Route)), slog.Float64("classifier_confidence", c.Confidence))
	}
	if res.ErrorReason != "" {
		attrs = append(attrs, slog.String("error_reason", res.ErrorReason))
	}
	r.log.LogAttrs(ctx, finalLevel(res), "final.route", attrs...)
}

// finalLevel is info when the turn went further than its decision (a worker, a proposal, a
// deliberation, a classifier call, a refusal, an error, another route); a plain chat's
// final.route adds nothing to its router.decision line and is logged at debug.
func finalLevel(res *Result) slog.Level {
	plain := res.InitialRoute == domain.RouteChat && res.FinalRoute == domain.RouteChat && res.WorkerCalls == 0 &&
		!res.RerouteUsed && res.StopReason == "" && res.Refusal == "" && !res.Deliberation && len(res.Proposals) == 0 &&
		res.Classifier == nil && res.ErrorReason == ""
	if plain {
		return slog.LevelDebug
	}
	return slog.LevelInfo
}

// propose asks coder-order for one proposal; a failure is returned as a result with its code,
// so chat-mio can tell the user what happened.
func (r *Router) propose(ctx context.Context, in Input, route domain.Route, res *Result) {
	order := route.Order(r.cfg.DefaultCodeOrder)
	p, err := r.coder.Propose(ctx, ProposeInput{
		JobID: in.JobID, Order: order, Task: in.Text, Route: route, Context: historyContext(in.History, r.cfg.HistoryTurns),
		LocalOnly: in.LocalOnly, Locale: r.locale(in), ConfirmedCostUSD: in.ConfirmedCostUSD, ConfirmedTokens: in.ConfirmedTokens,
	})
	res.FinalRoute = route
	if err != nil {
		code, msg := coderErrorCode(err)
		var ce *CoderError
		var est *domain.CostHint
		if errors.As(err, &ce) {
			est = ce.Estimate
		}
		res.Proposals = append(res.Proposals, domain.ProposalResult{Order: order, ErrorCode: code, ErrorMessage: msg, Estimate: est})
		res.ErrorReason = "coder_" + code + ": " + msg
		r.log.LogAttrs(ctx, slog.LevelWarn, "coder.propose_failed", jobAttr(in), slog.String("order", order),
			slog.String("error_code", code), slog.String("error", msg))
		return
	}
	if order == "" {
		order = p.Order
	}
	res.Proposals = append(res.Proposals, domain.ProposalResult{Order: order, Proposal: &p})
	if r.cfg.AutoDeliberateOnHighRisk && p.Risk.Level == domain.RiskHigh && !in.LocalOnly {
		r.autoDeliberate(ctx, in, order, res)
	}
}

func askForTask(command, locale string) string {
	if command == "" {
		command = "/code"
	}
	if locale == "en" {
		return "What should I do? Write the request after " + command + "."
	}
	return "何をしますか？" + command + " の後に依頼内容を書いてください。"
}

func coderErrorCode(err error) (string, string) {
	var ce *CoderError
	if errors.As(err, &ce) {
		return ce.Code, ce.Message
	}
	return "unavailable", err.Error()
}

func historyContext(turns []Turn, limit int) []string {
	if limit > 0 && len(turns) > limit {
		turns = turns[len(turns)-limit:]
	}
	out := make([]string, 0, len(turns))
	for _, t := range turns {
		out = append(out, t.Role+": "+t.Text)
	}
	return out
}

func millisSince(now func() time.Time, start time.Time) int64 { return now().Sub(start).Milliseconds() }
