package app

import (
	"context"
	"log/slog"
	"time"

	"github.com/picoclaw-suite/picoclaw/services/router-shiro/internal/domain"
)

// deliberationMargin lets coder-order answer with its per-order timeouts before our deadline.
const deliberationMargin = 5 * time.Second

// deliberate asks every enabled order in parallel (coder-order runs them) and compares the
// proposals: affected files, overlaps, risk and cost (SPEC §7). The user picks with /pick.
func (r *Router) deliberate(ctx context.Context, in Input, res *Result) {
	res.FinalRoute = domain.RouteCode
	r.log.LogAttrs(ctx, slog.LevelInfo, "deliberation.started", jobAttr(in), slog.String("trigger", "command"),
		slog.Int("task_chars", len([]rune(in.Text))))
	results, ok := r.proposeMany(ctx, in, nil, res)
	if !ok {
		return
	}
	res.Proposals = results
	r.compare(ctx, in, res)
}

// autoDeliberate runs when a CODE proposal came back high risk and deliberation.auto_on_high_risk
// is on: the other orders propose too, and the user sees the comparison with the first
// proposal as option 1.
func (r *Router) autoDeliberate(ctx context.Context, in Input, first string, res *Result) {
	var others []string
	for _, o := range []string{"order1", "order2", "order3"} {
		if o != first {
			others = append(others, o)
		}
	}
	res.Deliberation = true
	r.log.LogAttrs(ctx, slog.LevelInfo, "deliberation.started", jobAttr(in), slog.String("trigger", "auto_high_risk"),
		slog.String("first_order", first), slog.Any("orders", others))
	results, ok := r.proposeMany(ctx, in, others, res)
	if !ok {
		results = nil
	}
	res.Proposals = append(res.Proposals, results...)
	r.compare(ctx, in, res)
}

func (r *Router) proposeMany(ctx context.Context, in Input, orders []string, res *Result) ([]domain.ProposalResult, bool) {
	callCtx := ctx
	if r.cfg.DeliberationTimeout > 0 {
		var cancel context.CancelFunc
		callCtx, cancel = context.WithTimeout(ctx, r.cfg.DeliberationTimeout+deliberationMargin)
		defer cancel()
	}
	results, err := r.coder.ProposeMany(callCtx, ProposeManyInput{
		JobID: in.JobID, Orders: orders, Task: in.Text, Context: historyContext(in.History, r.cfg.HistoryTurns),
		LocalOnly: in.LocalOnly, Locale: r.locale(in),
	})
	if err != nil {
		code, msg := coderErrorCode(err)
		res.ErrorReason = "coder_" + code + ": " + msg
		r.log.LogAttrs(ctx, slog.LevelWarn, "deliberation.failed", jobAttr(in), slog.String("error_code", code), slog.String("error", msg))
		return nil, false
	}
	for _, pr := range results {
		attrs := []slog.Attr{jobAttr(in), slog.String("order", pr.Order), slog.Bool("ok", pr.Proposal != nil && pr.ErrorCode == "")}
		if pr.Proposal != nil {
			attrs = append(attrs, slog.Int64("estimated_tokens", pr.Proposal.Cost.EstimatedTokens),
				slog.Float64("estimated_cost_usd", pr.Proposal.Cost.EstimatedCostUSD),
				slog.String("risk", string(pr.Proposal.Risk.Level)), slog.Int64("latency_ms", pr.Proposal.LatencyMillis))
		}
		if pr.ErrorCode != "" {
			attrs = append(attrs, slog.String("error_code", pr.ErrorCode), slog.String("error", pr.ErrorMessage))
		}
		r.log.LogAttrs(ctx, slog.LevelInfo, "deliberation.proposal_received", attrs...)
	}
	return results, true
}

func (r *Router) compare(ctx context.Context, in Input, res *Result) {
	cmp := domain.Compare(res.Proposals, r.locale(in))
	res.Comparison = &cmp
	succeeded := 0
	for _, e := range cmp.Entries {
		if e.ErrorCode == "" {
			succeeded++
		}
	}
	r.log.LogAttrs(ctx, slog.LevelInfo, "deliberation.comparison", jobAttr(in),
		slog.Int("proposals", len(cmp.Entries)), slog.Int("succeeded", succeeded),
		slog.Any("overlapping_paths", cmp.OverlappingPaths), slog.Int("recommended", cmp.Recommended))
}
