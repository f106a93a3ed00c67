package app

import (
	"context"
	"errors"
	"log/slog"
	"strings"

	"github.com/picoclaw-suite/picoclaw/pkg/llm"
	"github.com/picoclaw-suite/picoclaw/services/router-shiro/internal/domain"
)

// runLoop runs the worker model under loop control (SPEC §5). Worker failures end the loop
// with stop reason worker_failure; only the end of ctx is an error.
func (r *Router) runLoop(ctx context.Context, in Input, res *Result) error {
	start := r.now()
	limits := r.cfg.Loop
	locale := r.locale(in)
	state := domain.LoopState{Route: res.Decision.Route, LocalOnly: in.LocalOnly}
	tools := r.workerTools()
	base := r.workerMessages(state.Route, in, locale, tools != nil)
	var transcript []llm.Message
	var last *domain.WorkerOutput
	stop := func(reason domain.StopReason) {
		res.StopReason = reason
		res.WorkerCalls = state.Calls
		res.RerouteUsed = state.RerouteUsed
		res.FinalRoute = state.Route
		res.LoopMillis = millisSince(r.now, start)
		attrs := []slog.Attr{
			jobAttr(in),
			slog.String("stop_reason", string(reason)),
			slog.String("route", string(state.Route)),
			slog.Int("worker_calls", state.Calls),
			slog.Bool("reroute_used", state.RerouteUsed),
			slog.Int64("elapsed_ms", res.LoopMillis),
		}
		if last != nil {
			attrs = append(attrs, slog.Bool("needs_next_loop", last.NeedsNextLoop), slog.String("risk", string(last.Risk)),
				slog.Float64("confidence", last.Confidence))
			if last.Fit != nil {
				attrs = append(attrs, slog.Float64("fit", *last.Fit))
			}
		}
		if res.ErrorReason != "" {
			attrs = append(attrs, slog.String("error_reason", res.ErrorReason))
		}
		r.log.LogAttrs(ctx, slog.LevelInfo, "loop.stop", attrs...)
		r.metrics.LoopStop(string(reason))
	}
	for {
		elapsed := r.now().Sub(start)
		if state.Calls >= limits.MaxLoops {
			stop(domain.StopMaxLoops)
			return nil
		}
		if elapsed >= limits.MaxMillis {
			stop(domain.StopMaxMillis)
			return nil
		}
		callCtx, cancel := context.WithTimeout(ctx, limits.MaxMillis-elapsed)
		req := llm.Request{Messages: append(append([]llm.Message(nil), base...), transcript...), JSON: true, Contract: llm.ContractWorker}
		resp, toolCalls, err := r.callWorker(callCtx, req, tools, limits.MaxMillis-elapsed)
		budgetSpent := callCtx.Err() != nil
		cancel()
		state.Calls++
		state.Elapsed = r.now().Sub(start)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			if budgetSpent {
				stop(domain.StopMaxMillis)
				return nil
			}
			reason := "call_failed: " + err.Error()
			if lme, ok := errors.AsType[*llm.LocalModelError](err); ok {
				// Stable for chat-mio, which tells the user what to run.
				reason = lme.Reason()
			}
			r.workerFail(ctx, in, state, reason, res)
			stop(domain.StopWorkerFailure)
			return nil
		}
		out, err := domain.ParseWorkerOutput(resp.Text)
		if err != nil {
			r.workerFail(ctx, in, state, err.Error(), res)
			stop(domain.StopWorkerFailure)
			return nil
		}
		last = &out
		res.WorkerOutputs = append(res.WorkerOutputs, out)
		r.workerSuccess(ctx, in, state, out, resp, toolCalls)
		if target, ok := domain.RerouteTarget(state, out); ok {
			from := state.Route
			state.Route = target
			state.RerouteUsed = true
			r.log.LogAttrs(ctx, slog.LevelInfo, "route.override", jobAttr(in),
				slog.String("from_route", string(from)), slog.String("to_route", string(target)),
				slog.Float64("fit", *out.Fit), slog.Float64("confidence", out.Confidence), slog.Int("loop", state.Calls))
			r.metrics.Reroute(string(from), string(target))
			switch {
			case target == domain.RouteChat:
				stop(domain.StopDone)
				return nil
			case target.IsCode():
				stop(domain.StopDone)
				r.propose(ctx, in, target, res)
				return nil
			}
			base = r.workerMessages(target, in, locale, tools != nil)
			transcript = nil
			continue
		}
		if reason, done := domain.NextStop(state, out, limits); done {
			if reason == domain.StopNeedUserConfirmation {
				res.Questions = out.QuestionsForUser
			}
			stop(reason)
			return nil
		}
		transcript = append(transcript,
			llm.Message{Role: llm.RoleAssistant, Content: resp.Text},
			llm.Message{Role: llm.RoleUser, Content: continuePrompt(state.Calls+1, limits.MaxLoops, locale)})
	}
}

func (r *Router) workerMessages(route domain.Route, in Input, locale string, tools bool) []llm.Message {
	sys := workerSystemPrompt(route, locale)
	if tools {
		sys += "\n" + workerToolsNote(r.toolLimits.MaxCalls)
	}
	msgs := []llm.Message{{Role: llm.RoleSystem, Content: sys}}
	turns := in.History
	if n := r.cfg.HistoryTurns; n > 0 && len(turns) > n {
		turns = turns[len(turns)-n:]
	}
	for _, t := range turns {
		role := llm.RoleUser
		if strings.EqualFold(t.Role, "assistant") {
			role = llm.RoleAssistant
		}
		msgs = append(msgs, llm.Message{Role: role, Content: t.Text})
	}
	return append(msgs, llm.Message{Role: llm.RoleUser, Content: in.Text})
}

func (r *Router) workerSuccess(ctx context.Context, in Input, s domain.LoopState, o domain.WorkerOutput, resp *llm.Response, toolCalls int) {
	attrs := []slog.Attr{
		jobAttr(in),
		slog.String("route", string(s.Route)),
		slog.Int("loop", s.Calls),
		slog.Bool("needs_next_loop", o.NeedsNextLoop),
		slog.Float64("confidence", o.Confidence),
		slog.String("risk", string(o.Risk)),
		slog.Int("questions", len(o.QuestionsForUser)),
		slog.Int64("latency_ms", resp.Latency.Milliseconds()),
		slog.String("model", resp.Model),
		slog.Int("tool_calls", toolCalls),
	}
	if o.Fit != nil {
		attrs = append(attrs, slog.Float64("fit", *o.Fit))
	}
	if o.SuggestedRoute != "" {
		attrs = append(attrs, slog.String("suggested_route", string(o.SuggestedRoute)))
	}
	r.log.LogAttrs(ctx, slog.LevelInfo, "worker.success", attrs...)
}

func (r *Router) workerFail(ctx context.Context, in Input, s domain.LoopState, reason string, res *Result) {
	res.ErrorReason = reason
	r.log.LogAttrs(ctx, slog.LevelWarn, "worker.fail", jobAttr(in),
		slog.String("route", string(s.Route)), slog.Int("loop", s.Calls),
		slog.String("error_reason", reason), slog.Bool("needs_next_loop", false))
}
