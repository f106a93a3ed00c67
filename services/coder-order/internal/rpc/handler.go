// Package rpc maps the Connect API of coder-order onto its use cases.
package rpc

import (
	"context"
	"errors"
	"log/slog"
	"strings"

	"connectrpc.com/connect"

	coderv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/coder/v1"
	"github.com/picoclaw-suite/picoclaw/gen/picoclaw/coder/v1/coderv1connect"
	commonv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/common/v1"
	"github.com/picoclaw-suite/picoclaw/pkg/enum"
	"github.com/picoclaw-suite/picoclaw/pkg/fault"
	"github.com/picoclaw-suite/picoclaw/pkg/llm"
	"github.com/picoclaw-suite/picoclaw/pkg/rpcserver"
	"github.com/picoclaw-suite/picoclaw/services/coder-order/internal/app"
	"github.com/picoclaw-suite/picoclaw/services/coder-order/internal/domain"
)

// Handler implements coderv1connect.CoderServiceHandler.
type Handler struct {
	proposer *app.Proposer
	locale   string
	log      *slog.Logger
}

var _ coderv1connect.CoderServiceHandler = (*Handler)(nil)

// NewHandler returns the Connect handler over p; locale is the default for user-facing text.
func NewHandler(p *app.Proposer, locale string, log *slog.Logger) *Handler {
	return &Handler{proposer: p, locale: locale, log: log}
}

// Propose implements CoderService.Propose.
func (h *Handler) Propose(ctx context.Context, req *coderv1.ProposeRequest) (*coderv1.ProposeResponse, error) {
	order := req.GetOrder()
	if order == "" {
		order = routeOrders.Domain(req.GetRoute())
	}
	locale := h.localeOf(req.GetLocale())
	prop, err := h.proposer.Propose(ctx, order, app.Task{
		JobID: req.GetJobId(), Text: req.GetTask(), Context: req.GetContext(), LocalOnly: req.GetLocalOnly(), Locale: locale,
		ConfirmedCostUSD: req.GetConfirmedCostUsd(), ConfirmedTokens: req.GetConfirmedTokens(),
	})
	if err != nil {
		return nil, h.toConnect(ctx, order, locale, err)
	}
	return &coderv1.ProposeResponse{Proposal: toProto(prop)}, nil
}

// ProposeMany implements CoderService.ProposeMany. Per-order failures are results, not an
// RPC error.
func (h *Handler) ProposeMany(ctx context.Context, req *coderv1.ProposeManyRequest) (*coderv1.ProposeManyResponse, error) {
	locale := h.localeOf(req.GetLocale())
	if strings.TrimSpace(req.GetTask()) == "" {
		return nil, connect.NewError(connect.CodeInvalidArgument, errors.New(domain.UserMessage(locale, "deliberation", domain.ErrInvalidTask)))
	}
	results := h.proposer.ProposeMany(ctx, req.GetOrders(), app.Task{
		JobID: req.GetJobId(), Text: req.GetTask(), Context: req.GetContext(), LocalOnly: req.GetLocalOnly(), Locale: locale,
	})
	res := &coderv1.ProposeManyResponse{}
	for _, r := range results {
		pr := &commonv1.ProposalResult{Order: r.Order}
		if r.Err != nil {
			pr.ErrorCode = domain.Code(r.Err)
			pr.ErrorMessage = domain.UserMessage(locale, r.Order, r.Err)
			pr.Estimate = estimateProto(r.Err)
			h.log.WarnContext(ctx, "coder.order_failed", slog.String("order", r.Order), slog.String("error_code", pr.ErrorCode), slog.String("error", r.Err.Error()))
		} else {
			pr.Proposal = toProto(r.Proposal)
		}
		res.Results = append(res.Results, pr)
	}
	return res, nil
}

func (h *Handler) localeOf(l string) string {
	if l == "en" || l == "ja" {
		return l
	}
	return h.locale
}

// routeOrders maps ROUTE_CODE1..3 to the order name; other routes mean the default order.
var routeOrders = enum.New(map[string]commonv1.Route{
	domain.Order1: commonv1.Route_ROUTE_CODE1,
	domain.Order2: commonv1.Route_ROUTE_CODE2,
	domain.Order3: commonv1.Route_ROUTE_CODE3,
})

// toConnect is the one place coder-order maps errors to Connect codes. The message is the
// user-facing text; a ProposalResult detail carries the stable error code.
func (h *Handler) toConnect(ctx context.Context, order, locale string, err error) error {
	k := kindOf(err)
	if k == fault.Internal {
		h.log.ErrorContext(ctx, "coder.internal_error", slog.String("order", order), slog.String("error", err.Error()))
		return connect.NewError(connect.CodeInternal, errors.New("internal error"))
	}
	code := rpcserver.CodeOf(k)
	h.log.WarnContext(ctx, "coder.order_failed", slog.String("order", order), slog.String("error_code", domain.Code(err)), slog.String("error", err.Error()))
	cerr := connect.NewError(code, errors.New(domain.UserMessage(locale, orderLabel(order), err)))
	if d, derr := connect.NewErrorDetail(&commonv1.ProposalResult{Order: order, ErrorCode: domain.Code(err),
		ErrorMessage: domain.UserMessage(locale, orderLabel(order), err), Estimate: estimateProto(err)}); derr == nil {
		cerr.AddDetail(d)
	}
	return cerr
}

func orderLabel(o string) string {
	if o == "" {
		return "coder"
	}
	return o
}

var riskLevels = map[string]commonv1.RiskLevel{"low": commonv1.RiskLevel_RISK_LEVEL_LOW, "medium": commonv1.RiskLevel_RISK_LEVEL_MEDIUM, "high": commonv1.RiskLevel_RISK_LEVEL_HIGH}

var taskTypes = map[string]commonv1.TaskType{
	"design": commonv1.TaskType_TASK_TYPE_DESIGN, "codegen": commonv1.TaskType_TASK_TYPE_CODEGEN, "review": commonv1.TaskType_TASK_TYPE_REVIEW,
	"refactor": commonv1.TaskType_TASK_TYPE_REFACTOR, "ops": commonv1.TaskType_TASK_TYPE_OPS, "docs": commonv1.TaskType_TASK_TYPE_DOCS,
}

func toProto(p *domain.Proposal) *commonv1.Proposal {
	return &commonv1.Proposal{
		JobId: p.JobID,
		Plan:  p.Plan,
		Patch: p.Patch,
		Risk: &commonv1.Risk{
			Level: riskLevels[p.Risk.Level], Destructive: p.Risk.Destructive, CompatibilityIssues: p.Risk.CompatibilityIssues,
			RollbackPossible: p.Risk.RollbackPossible, Notes: p.Risk.Notes,
		},
		CostHint:     &commonv1.CostHint{EstimatedTokens: p.CostHint.EstimatedTokens, EstimatedCostUsd: p.CostHint.EstimatedCostUSD, NearLimit: p.CostHint.NearLimit},
		NeedApproval: p.NeedApproval,
		UsesBrowser:  p.UsesBrowser,
		TaskType:     taskTypes[p.TaskType],
		Order:        p.Order,
		Provider:     p.Provider,
		Model:        p.Model,
		Usage:        &commonv1.TokenUsage{InputTokens: p.Usage.InputTokens, OutputTokens: p.Usage.OutputTokens},
		LatencyMs:    p.LatencyMS,
		Artifacts:    p.Artifacts,
		Constraints:  p.Constraints,
		Base:         p.Base,
	}
}

// kindOf classifies coder-order's errors (pkg/fault sentinels) and the model client's.
func kindOf(err error) fault.Kind {
	if k := fault.KindOf(err); k != fault.Internal {
		return k
	}
	switch {
	case errors.Is(err, domain.ErrLocalOnly), errors.Is(err, llm.ErrModelUnavailable):
		// A local model that is not installed needs someone to install it (picoclaw models setup).
		return fault.Precondition
	case errors.Is(err, llm.ErrBadResponse), errors.Is(err, llm.ErrRejected):
		return fault.Conflict
	case errors.Is(err, llm.ErrUnauthenticated):
		return fault.Unauthenticated
	case errors.Is(err, llm.ErrRateLimited), errors.Is(err, llm.ErrUnavailable):
		return fault.Unavailable
	case errors.Is(err, llm.ErrTimeout):
		return fault.Deadline
	}
	return fault.Internal
}

// estimateProto is the estimate of a cost_over_limit error, nil for every other error.
func estimateProto(err error) *commonv1.CostHint {
	est, ok := domain.EstimateOf(err)
	if !ok {
		return nil
	}
	return &commonv1.CostHint{EstimatedTokens: est.Tokens, EstimatedCostUsd: est.CostUSD, NearLimit: true}
}
