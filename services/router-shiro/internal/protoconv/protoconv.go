// Package protoconv converts between the shared protobuf types and router-shiro's domain, so
// the use cases stay free of generated code.
package protoconv

import (
	commonv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/common/v1"
	"github.com/picoclaw-suite/picoclaw/services/router-shiro/internal/domain"
)

// Route converts a domain route (unknown → UNSPECIFIED).
func Route(r domain.Route) commonv1.Route {
	switch r {
	case domain.RouteChat:
		return commonv1.Route_ROUTE_CHAT
	case domain.RoutePlan:
		return commonv1.Route_ROUTE_PLAN
	case domain.RouteAnalyze:
		return commonv1.Route_ROUTE_ANALYZE
	case domain.RouteOps:
		return commonv1.Route_ROUTE_OPS
	case domain.RouteResearch:
		return commonv1.Route_ROUTE_RESEARCH
	case domain.RouteCode:
		return commonv1.Route_ROUTE_CODE
	case domain.RouteCode1:
		return commonv1.Route_ROUTE_CODE1
	case domain.RouteCode2:
		return commonv1.Route_ROUTE_CODE2
	case domain.RouteCode3:
		return commonv1.Route_ROUTE_CODE3
	}
	return commonv1.Route_ROUTE_UNSPECIFIED
}

// RouteFromProto converts a proto route (UNSPECIFIED or unknown → "").
func RouteFromProto(r commonv1.Route) domain.Route {
	for _, d := range domain.Routes() {
		if Route(d) == r {
			return d
		}
	}
	return domain.RouteUnspecified
}

// Source converts a decision source.
func Source(s domain.Source) commonv1.DecisionSource {
	switch s {
	case domain.SourceCommand:
		return commonv1.DecisionSource_DECISION_SOURCE_COMMAND
	case domain.SourceRule:
		return commonv1.DecisionSource_DECISION_SOURCE_RULE
	case domain.SourceClassifier:
		return commonv1.DecisionSource_DECISION_SOURCE_CLASSIFIER
	case domain.SourceFallback:
		return commonv1.DecisionSource_DECISION_SOURCE_FALLBACK
	case domain.SourceChannelPolicy:
		return commonv1.DecisionSource_DECISION_SOURCE_CHANNEL_POLICY
	case domain.SourceSignals:
		return commonv1.DecisionSource_DECISION_SOURCE_SIGNALS
	}
	return commonv1.DecisionSource_DECISION_SOURCE_UNSPECIFIED
}

// Risk converts a risk level.
func Risk(r domain.Risk) commonv1.RiskLevel {
	switch r {
	case domain.RiskLow:
		return commonv1.RiskLevel_RISK_LEVEL_LOW
	case domain.RiskMedium:
		return commonv1.RiskLevel_RISK_LEVEL_MEDIUM
	case domain.RiskHigh:
		return commonv1.RiskLevel_RISK_LEVEL_HIGH
	}
	return commonv1.RiskLevel_RISK_LEVEL_UNSPECIFIED
}

// RiskFromProto converts a risk level.
func RiskFromProto(r commonv1.RiskLevel) domain.Risk {
	switch r {
	case commonv1.RiskLevel_RISK_LEVEL_LOW:
		return domain.RiskLow
	case commonv1.RiskLevel_RISK_LEVEL_MEDIUM:
		return domain.RiskMedium
	case commonv1.RiskLevel_RISK_LEVEL_HIGH:
		return domain.RiskHigh
	}
	return ""
}

// Decision converts a routing decision.
func Decision(d domain.Decision) *commonv1.RouteDecision {
	return &commonv1.RouteDecision{
		Route: Route(d.Route), Source: Source(d.Source), Confidence: d.Confidence,
		Reason: d.Reason, Evidence: d.Evidence, Matched: d.Matched,
	}
}

// WorkerOutput converts a worker answer.
func WorkerOutput(o domain.WorkerOutput) *commonv1.WorkerOutput {
	return &commonv1.WorkerOutput{
		Result: o.Result, NeedsNextLoop: o.NeedsNextLoop, Why: o.Why, NextActions: o.NextActions,
		QuestionsForUser: o.QuestionsForUser, Confidence: o.Confidence, Risk: Risk(o.Risk), Fit: o.Fit,
		SuggestedRoute: Route(o.SuggestedRoute),
	}
}

func taskTypes() map[commonv1.TaskType]string {
	return map[commonv1.TaskType]string{
		commonv1.TaskType_TASK_TYPE_DESIGN: "design", commonv1.TaskType_TASK_TYPE_CODEGEN: "codegen",
		commonv1.TaskType_TASK_TYPE_REVIEW: "review", commonv1.TaskType_TASK_TYPE_REFACTOR: "refactor",
		commonv1.TaskType_TASK_TYPE_OPS: "ops", commonv1.TaskType_TASK_TYPE_DOCS: "docs",
	}
}

// ProposalFromProto converts a coder proposal.
func ProposalFromProto(p *commonv1.Proposal) domain.Proposal {
	out := domain.Proposal{
		JobID: p.GetJobId(), Plan: p.GetPlan(), Patch: p.GetPatch(), NeedApproval: p.GetNeedApproval(),
		UsesBrowser: p.GetUsesBrowser(), TaskType: taskTypes()[p.GetTaskType()], Order: p.GetOrder(),
		Provider: p.GetProvider(), Model: p.GetModel(), LatencyMillis: p.GetLatencyMs(),
		InputTokens: p.GetUsage().GetInputTokens(), OutputTokens: p.GetUsage().GetOutputTokens(),
		Risk: domain.ProposalRisk{
			Level: RiskFromProto(p.GetRisk().GetLevel()), Destructive: p.GetRisk().GetDestructive(),
			CompatibilityIssues: p.GetRisk().GetCompatibilityIssues(), RollbackPossible: p.GetRisk().GetRollbackPossible(),
			Notes: p.GetRisk().GetNotes(),
		},
		Cost: domain.CostHint{
			EstimatedTokens: p.GetCostHint().GetEstimatedTokens(), EstimatedCostUSD: p.GetCostHint().GetEstimatedCostUsd(),
			NearLimit: p.GetCostHint().GetNearLimit(),
		},
	}
	return out
}

// Proposal converts a proposal back for the router's own API.
func Proposal(p domain.Proposal) *commonv1.Proposal {
	var tt commonv1.TaskType
	for k, v := range taskTypes() {
		if v == p.TaskType {
			tt = k
		}
	}
	return &commonv1.Proposal{
		JobId: p.JobID, Plan: p.Plan, Patch: p.Patch, NeedApproval: p.NeedApproval, UsesBrowser: p.UsesBrowser,
		TaskType: tt, Order: p.Order, Provider: p.Provider, Model: p.Model, LatencyMs: p.LatencyMillis,
		Usage: &commonv1.TokenUsage{InputTokens: p.InputTokens, OutputTokens: p.OutputTokens},
		Risk: &commonv1.Risk{Level: Risk(p.Risk.Level), Destructive: p.Risk.Destructive,
			CompatibilityIssues: p.Risk.CompatibilityIssues, RollbackPossible: p.Risk.RollbackPossible, Notes: p.Risk.Notes},
		CostHint: &commonv1.CostHint{EstimatedTokens: p.Cost.EstimatedTokens, EstimatedCostUsd: p.Cost.EstimatedCostUSD, NearLimit: p.Cost.NearLimit},
	}
}

// ProposalResultFromProto converts one deliberation result.
func ProposalResultFromProto(r *commonv1.ProposalResult) domain.ProposalResult {
	out := domain.ProposalResult{Order: r.GetOrder(), ErrorCode: r.GetErrorCode(), ErrorMessage: r.GetErrorMessage()}
	if r.GetProposal() != nil {
		p := ProposalFromProto(r.GetProposal())
		out.Proposal = &p
	}
	return out
}

// ProposalResult converts one result back.
func ProposalResult(r domain.ProposalResult) *commonv1.ProposalResult {
	out := &commonv1.ProposalResult{Order: r.Order, ErrorCode: r.ErrorCode, ErrorMessage: r.ErrorMessage}
	if r.Proposal != nil {
		out.Proposal = Proposal(*r.Proposal)
	}
	return out
}
