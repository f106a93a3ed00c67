package peers

import (
	"context"
	"strings"

	commonv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/common/v1"
	routerv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/router/v1"
	"github.com/picoclaw-suite/picoclaw/gen/picoclaw/router/v1/routerv1connect"
	"github.com/picoclaw-suite/picoclaw/services/chat-mio/internal/app"
)

// Router is router-shiro.
type Router struct {
	Client routerv1connect.RouterServiceClient
}

var _ app.Router = Router{}

// Route implements app.Router.
func (r Router) Route(ctx context.Context, req app.RouteRequest) (app.RouteResult, error) {
	history := make([]*routerv1.Turn, 0, len(req.History))
	for _, m := range req.History {
		history = append(history, &routerv1.Turn{Role: m.Role, Text: m.Text})
	}
	res, err := r.Client.ProcessTask(ctx, &routerv1.ProcessTaskRequest{
		JobId: req.JobID, SessionId: req.SessionID, Channel: req.Channel, Text: req.Text, LocalOnly: req.LocalOnly,
		PrevPrimaryRoute: routeEnum(req.PrevRoute), History: history, Locale: string(req.Locale),
		ConfirmedCostUsd: req.Confirmed.USD(), ConfirmedTokens: req.Confirmed.TokenCount(),
	})
	if err != nil {
		return app.RouteResult{}, classify("router-shiro", err)
	}
	d := res.GetDecision()
	out := app.RouteResult{
		Decision: app.Decision{Route: routeName(d.GetRoute()), Source: enumName(d.GetSource().String(), "DECISION_SOURCE_"),
			Confidence: d.GetConfidence(), Reason: d.GetReason(), Evidence: d.GetEvidence(), Matched: d.GetMatched()},
		FinalRoute: routeName(res.GetFinalRoute()), Refusal: res.GetRefusal(), Deliberation: res.GetDeliberation(),
		Comparison: res.GetComparison().GetSummary(), Questions: res.GetQuestionsForUser(), ErrorReason: res.GetErrorReason(),
	}
	for _, pr := range res.GetProposals() {
		o := app.ProposalOption{Order: pr.GetOrder(), ErrorCode: pr.GetErrorCode(), ErrorMessage: pr.GetErrorMessage()}
		if e := pr.GetEstimate(); e != nil {
			o.Estimate = &app.CostEstimate{Tokens: e.GetEstimatedTokens(), CostUSD: e.GetEstimatedCostUsd()}
		}
		if p := pr.GetProposal(); p != nil {
			prop, err := encodeProposal(p)
			if err != nil {
				return app.RouteResult{}, err
			}
			o.Proposal = &prop
		}
		out.Proposals = append(out.Proposals, o)
	}
	for _, w := range res.GetWorkerOutputs() {
		out.Workers = append(out.Workers, app.WorkerOutput{Result: w.GetResult(), NextActions: w.GetNextActions()})
	}
	return out, nil
}

// routeName is the SPEC name of a route enum ("" when unspecified).
func routeName(r commonv1.Route) string {
	if r == commonv1.Route_ROUTE_UNSPECIFIED {
		return ""
	}
	return enumName(r.String(), "ROUTE_")
}

// routeEnum is the enum of a SPEC route name (unspecified when unknown).
func routeEnum(name string) commonv1.Route {
	return commonv1.Route(commonv1.Route_value["ROUTE_"+strings.ToUpper(name)])
}

// enumName strips an enum value's prefix ("" for the unspecified value).
func enumName(s, prefix string) string {
	s = strings.TrimPrefix(s, prefix)
	if s == "UNSPECIFIED" {
		return ""
	}
	return s
}
