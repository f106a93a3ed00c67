// Package protoconv converts between the shared protobuf types and router-shiro's domain, so
// the use cases stay free of generated code.
package protoconv

import (
	commonv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/common/v1"
	"github.com/picoclaw-suite/picoclaw/pkg/enum"
	"github.com/picoclaw-suite/picoclaw/services/router-shiro/internal/domain"
)

var routes = enum.New(map[domain.Route]commonv1.Route{
	domain.RouteChat:     commonv1.Route_ROUTE_CHAT,
	domain.RoutePlan:     commonv1.Route_ROUTE_PLAN,
	domain.RouteAnalyze:  commonv1.Route_ROUTE_ANALYZE,
	domain.RouteOps:      commonv1.Route_ROUTE_OPS,
	domain.RouteResearch: commonv1.Route_ROUTE_RESEARCH,
	domain.RouteCode:     commonv1.Route_ROUTE_CODE,
	domain.RouteCode1:    commonv1.Route_ROUTE_CODE1,
	domain.RouteCode2:    commonv1.Route_ROUTE_CODE2,
	domain.RouteCode3:    commonv1.Route_ROUTE_CODE3,
})

var sources = enum.New(map[domain.Source]commonv1.DecisionSource{
	domain.SourceCommand:       commonv1.DecisionSource_DECISION_SOURCE_COMMAND,
	domain.SourceRule:          commonv1.DecisionSource_DECISION_SOURCE_RULE,
	domain.SourceClassifier:    commonv1.DecisionSource_DECISION_SOURCE_CLASSIFIER,
	domain.SourceFallback:      commonv1.DecisionSource_DECISION_SOURCE_FALLBACK,
	domain.SourceChannelPolicy: commonv1.DecisionSource_DECISION_SOURCE_CHANNEL_POLICY,
	domain.SourceSignals:       commonv1.DecisionSource_DECISION_SOURCE_SIGNALS,
})

var risks = enum.New(map[domain.Risk]commonv1.RiskLevel{
	domain.RiskLow:    commonv1.RiskLevel_RISK_LEVEL_LOW,
	domain.RiskMedium: commonv1.RiskLevel_RISK_LEVEL_MEDIUM,
	domain.RiskHigh:   commonv1.RiskLevel_RISK_LEVEL_HIGH,
})

var taskTypes = enum.New(map[string]commonv1.TaskType{
	"design": commonv1.TaskType_TASK_TYPE_DESIGN, "codegen": commonv1.TaskType_TASK_TYPE_CODEGEN,
	"review": commonv1.TaskType_TASK_TYPE_REVIEW, "refactor": commonv1.TaskType_TASK_TYPE_REFACTOR,
	"ops": commonv1.TaskType_TASK_TYPE_OPS, "docs": commonv1.TaskType_TASK_TYPE_DOCS,
})

// Route converts a domain route (unknown → UNSPECIFIED).
func Route(r domain.Route) commonv1.Route { return routes.Wire(r) }

// RouteFromProto converts a proto route (UNSPECIFIED or unknown → "").
func RouteFromProto(r commonv1.Route) domain.Route { return routes.Domain(r) }

// Source converts a decision source.
func Source(s domain.Source) commonv1.DecisionSource { return sources.Wire(s) }

// Risk converts a risk level.
func Risk(r domain.Risk) commonv1.RiskLevel { return risks.Wire(r) }

// RiskFromProto converts a risk level.
func RiskFromProto(r commonv1.RiskLevel) domain.Risk { return risks.Domain(r) }

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

// ProposalFromProto converts a coder proposal.
func ProposalFromProto(p *commonv1.Proposal) domain.Proposal {
	out := domain.Proposal{
		JobID: p.GetJobId(), Plan: p.GetPlan(), Patch: p.GetPatch(), NeedApproval: p.GetNeedApproval(),
		UsesBrowser: p.GetUsesBrowser(), TaskType: taskTypes.Domain(p.GetTaskType()), Order: p.GetOrder(),
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
	return &commonv1.Proposal{
		JobId: p.JobID, Plan: p.Plan, Patch: p.Patch, NeedApproval: p.NeedApproval, UsesBrowser: p.UsesBrowser,
		TaskType: taskTypes.Wire(p.TaskType), Order: p.Order, Provider: p.Provider, Model: p.Model, LatencyMs: p.LatencyMillis,
		Usage: &commonv1.TokenUsage{InputTokens: p.InputTokens, OutputTokens: p.OutputTokens},
		Risk: &commonv1.Risk{Level: Risk(p.Risk.Level), Destructive: p.Risk.Destructive,
			CompatibilityIssues: p.Risk.CompatibilityIssues, RollbackPossible: p.Risk.RollbackPossible, Notes: p.Risk.Notes},
		CostHint: &commonv1.CostHint{EstimatedTokens: p.Cost.EstimatedTokens, EstimatedCostUsd: p.Cost.EstimatedCostUSD, NearLimit: p.Cost.NearLimit},
	}
}

// ProposalResultFromProto converts one deliberation result.
func ProposalResultFromProto(r *commonv1.ProposalResult) domain.ProposalResult {
	out := domain.ProposalResult{Order: r.GetOrder(), ErrorCode: r.GetErrorCode(), ErrorMessage: r.GetErrorMessage()}
	if e := r.GetEstimate(); e != nil {
		out.Estimate = &domain.CostHint{EstimatedTokens: e.GetEstimatedTokens(), EstimatedCostUSD: e.GetEstimatedCostUsd(), NearLimit: e.GetNearLimit()}
	}
	if r.GetProposal() != nil {
		p := ProposalFromProto(r.GetProposal())
		out.Proposal = &p
	}
	return out
}

// ProposalResult converts one result back.
func ProposalResult(r domain.ProposalResult) *commonv1.ProposalResult {
	out := &commonv1.ProposalResult{Order: r.Order, ErrorCode: r.ErrorCode, ErrorMessage: r.ErrorMessage}
	if e := r.Estimate; e != nil {
		out.Estimate = &commonv1.CostHint{EstimatedTokens: e.EstimatedTokens, EstimatedCostUsd: e.EstimatedCostUSD, NearLimit: e.NearLimit}
	}
	if r.Proposal != nil {
		out.Proposal = Proposal(*r.Proposal)
	}
	return out
}
