// Package rpc maps the Connect API of router-shiro onto its use cases.
package rpc

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	commonv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/common/v1"
	routerv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/router/v1"
	"github.com/picoclaw-suite/picoclaw/gen/picoclaw/router/v1/routerv1connect"
	"github.com/picoclaw-suite/picoclaw/pkg/enum"
	"github.com/picoclaw-suite/picoclaw/pkg/jobid"
	"github.com/picoclaw-suite/picoclaw/pkg/rpcserver"
	"github.com/picoclaw-suite/picoclaw/services/router-shiro/internal/app"
	"github.com/picoclaw-suite/picoclaw/services/router-shiro/internal/domain"
	"github.com/picoclaw-suite/picoclaw/services/router-shiro/internal/protoconv"
)

// MaxTextBytes bounds one message; longer input is refused rather than sent to a model.
const MaxTextBytes = 256 << 10

// Handler implements routerv1connect.RouterServiceHandler.
type Handler struct {
	Router *app.Router
	Log    *slog.Logger
}

var _ routerv1connect.RouterServiceHandler = (*Handler)(nil)

// Decide returns the route decision only.
func (h *Handler) Decide(ctx context.Context, req *routerv1.DecideRequest) (*routerv1.DecideResponse, error) {
	in, ctx, err := input(ctx, req.GetJobId(), req.GetSessionId(), req.GetChannel(), req.GetText(), req.GetLocalOnly(), req.GetPrevPrimaryRoute(), nil, "")
	if err != nil {
		return nil, h.toConnect(ctx, err)
	}
	out := h.Router.Decide(ctx, in)
	return &routerv1.DecideResponse{
		Decision: protoconv.Decision(out.Decision), Refusal: out.Refusal, TaskText: out.TaskText, Deliberation: out.Deliberation,
	}, nil
}

// ProcessTask decides the route and runs it.
func (h *Handler) ProcessTask(ctx context.Context, req *routerv1.ProcessTaskRequest) (*routerv1.ProcessTaskResponse, error) {
	turns := make([]app.Turn, 0, len(req.GetHistory()))
	for _, t := range req.GetHistory() {
		turns = append(turns, app.Turn{Role: t.GetRole(), Text: t.GetText()})
	}
	in, ctx, err := input(ctx, req.GetJobId(), req.GetSessionId(), req.GetChannel(), req.GetText(), req.GetLocalOnly(), req.GetPrevPrimaryRoute(), turns, req.GetLocale())
	if err != nil {
		return nil, h.toConnect(ctx, err)
	}
	if req.GetConfirmedCostUsd() < 0 || req.GetConfirmedTokens() < 0 {
		return nil, h.toConnect(ctx, fmt.Errorf("confirmed_cost_usd, confirmed_tokens: %w: must not be negative", domain.ErrInvalid))
	}
	in.ConfirmedCostUSD, in.ConfirmedTokens = req.GetConfirmedCostUsd(), req.GetConfirmedTokens()
	res, err := h.Router.ProcessTask(ctx, in)
	if err != nil {
		return nil, h.toConnect(ctx, err)
	}
	out := &routerv1.ProcessTaskResponse{
		Decision:         protoconv.Decision(res.Decision),
		InitialRoute:     protoconv.Route(res.InitialRoute),
		FinalRoute:       protoconv.Route(res.FinalRoute),
		Refusal:          res.Refusal,
		StopReason:       stopReasons.Wire(res.StopReason),
		QuestionsForUser: res.Questions,
		WorkerCalls:      int32(res.WorkerCalls),
		RerouteUsed:      res.RerouteUsed,
		Deliberation:     res.Deliberation,
		ErrorReason:      res.ErrorReason,
		TaskText:         res.TaskText,
		LoopMillis:       res.LoopMillis,
	}
	for _, o := range res.WorkerOutputs {
		out.WorkerOutputs = append(out.WorkerOutputs, protoconv.WorkerOutput(o))
	}
	for _, p := range res.Proposals {
		out.Proposals = append(out.Proposals, protoconv.ProposalResult(p))
	}
	if c := res.Comparison; c != nil {
		out.Comparison = comparison(*c)
	}
	return out, nil
}

// input validates a request. The JobID already rides in ctx's baggage (the rpcserver
// interceptor reconciles it with the request field), so every log line and outgoing call of
// this request carries it.
func input(ctx context.Context, job, session, channel, text string, localOnly bool, prev commonv1.Route, turns []app.Turn, locale string) (app.Input, context.Context, error) {
	if job == "" {
		job = jobid.FromContext(ctx)
	}
	if job != "" {
		id, err := jobid.Normalize(job)
		if err != nil {
			return app.Input{}, ctx, fmt.Errorf("job_id: %w", errors.Join(domain.ErrInvalid, err))
		}
		job = id
	}
	channel = strings.ToLower(strings.TrimSpace(channel))
	if !validChannel(channel) {
		return app.Input{}, ctx, fmt.Errorf("channel: %w: must be a short lower-case name such as line, slack or cli", domain.ErrInvalid)
	}
	if strings.TrimSpace(text) == "" {
		return app.Input{}, ctx, fmt.Errorf("text: %w: must not be empty", domain.ErrInvalid)
	}
	if len(text) > MaxTextBytes {
		return app.Input{}, ctx, fmt.Errorf("text: %w: longer than %d bytes", domain.ErrInvalid, MaxTextBytes)
	}
	if locale != "" && locale != "ja" && locale != "en" {
		return app.Input{}, ctx, fmt.Errorf("locale: %w: must be ja or en", domain.ErrInvalid)
	}
	return app.Input{
		JobID: job, SessionID: session, Channel: channel, Text: text, LocalOnly: localOnly,
		PrevRoute: protoconv.RouteFromProto(prev), History: turns, Locale: locale,
	}, ctx, nil
}

// validChannel accepts what a channel may be called (line, slack, cli, ...): short, lower-case.
func validChannel(s string) bool {
	if len(s) > 32 {
		return false
	}
	for _, c := range s {
		if (c < 'a' || c > 'z') && (c < '0' || c > '9') && c != '_' && c != '-' {
			return false
		}
	}
	return true
}

var stopReasons = enum.New(map[domain.StopReason]routerv1.StopReason{
	domain.StopDone:                 routerv1.StopReason_STOP_REASON_DONE,
	domain.StopMaxLoops:             routerv1.StopReason_STOP_REASON_MAX_LOOPS,
	domain.StopMaxMillis:            routerv1.StopReason_STOP_REASON_MAX_MILLIS,
	domain.StopWorkerFailure:        routerv1.StopReason_STOP_REASON_WORKER_FAILURE,
	domain.StopNeedUserConfirmation: routerv1.StopReason_STOP_REASON_NEED_USER_CONFIRMATION,
})

func comparison(c domain.Comparison) *routerv1.Comparison {
	out := &routerv1.Comparison{OverlappingPaths: c.OverlappingPaths, Summary: c.Summary, Recommended: int32(c.Recommended)}
	for _, e := range c.Entries {
		out.Entries = append(out.Entries, &routerv1.ComparedProposal{
			Number: int32(e.Number), Order: e.Order, AffectedPaths: e.AffectedPaths, Risk: protoconv.Risk(e.Risk),
			EstimatedCostUsd: e.EstimatedCostUSD, EstimatedTokens: e.EstimatedTokens, PlanSummary: e.PlanSummary,
			Destructive: e.Destructive, RollbackPossible: e.RollbackPossible, UsesBrowser: e.UsesBrowser,
			ErrorCode: e.ErrorCode, ErrorMessage: e.ErrorMessage, NearLimit: e.NearLimit, Operations: int32(e.Operations),
		})
	}
	return out
}

// toConnect maps the router's errors by their fault kind (pkg/rpcserver.ToConnect).
func (h *Handler) toConnect(ctx context.Context, err error) error {
	return rpcserver.ToConnect(ctx, h.Log, "router", err)
}
