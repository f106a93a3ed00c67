package peers

import (
	"context"
	"fmt"
	"strings"
	"time"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"

	approvalv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/approval/v1"
	"github.com/picoclaw-suite/picoclaw/gen/picoclaw/approval/v1/approvalv1connect"
	commonv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/common/v1"
	"github.com/picoclaw-suite/picoclaw/services/chat-mio/internal/app"
	"github.com/picoclaw-suite/picoclaw/services/chat-mio/internal/domain"
)

const approvalPeer = "approval"

// Approvals is the approval service.
type Approvals struct {
	Client approvalv1connect.ApprovalServiceClient
}

var _ app.Approvals = Approvals{}

// encodeProposal keeps a coder's proposal in its wire form for the trip to approval.
func encodeProposal(p *commonv1.Proposal) (app.Proposal, error) {
	b, err := proto.Marshal(p)
	if err != nil {
		return app.Proposal{}, fmt.Errorf("encode proposal: %w", err)
	}
	by := p.GetOrder()
	if m := strings.TrimSpace(p.GetProvider() + " " + p.GetModel()); m != "" {
		by = strings.TrimSpace(by + " (" + m + ")")
	}
	return app.Proposal{Order: p.GetOrder(), Plan: p.GetPlan(), Content: b,
		Answer: strings.TrimSpace(p.GetPatch()) == "", By: by}, nil
}

// decodeProposal is the proposal as the router made it; a proposal without wire form (built
// by chat-mio itself) carries its plan and order.
func decodeProposal(p app.Proposal) (*commonv1.Proposal, error) {
	out := &commonv1.Proposal{}
	if err := proto.Unmarshal(p.Content, out); err != nil {
		return nil, fmt.Errorf("decode proposal: %w: %v", domain.ErrInvalid, err)
	}
	if len(p.Content) == 0 {
		out.Plan, out.Order = p.Plan, p.Order
	}
	return out, nil
}

func actorProto(a app.Actor) *commonv1.Actor { return &commonv1.Actor{Id: a.ID, Channel: a.Channel} }

func jobOf(j *approvalv1.Job) app.ApprovalJob {
	by := j.GetDecidedBy().GetDisplayName()
	if by == "" && j.GetDecidedBy().GetId() != "" {
		by = j.GetDecidedBy().GetChannel() + ":" + j.GetDecidedBy().GetId()
	}
	return app.ApprovalJob{ID: j.GetJobId(), Status: app.JobStatus(strings.ToLower(enumName(j.GetStatus().String(), "JOB_STATUS_"))),
		Summary: j.GetSummary(), DenyReason: j.GetDenyReason(), DecidedBy: by, TraceParent: j.GetTraceParent(),
		CostConfirmation: j.GetCostConfirmation(),
		Cost:             app.CostEstimate{Tokens: j.GetCostHint().GetEstimatedTokens(), CostUSD: j.GetCostHint().GetEstimatedCostUsd()}}
}

// Request implements app.Approvals.
func (a Approvals) Request(ctx context.Context, in app.ProposalInput) (app.ApprovalRequest, error) {
	var p *commonv1.Proposal
	summary := ""
	if in.Cost != nil {
		// A cost confirmation: no patch, the order and the estimate; the task is its summary.
		p = &commonv1.Proposal{Order: in.Proposal.Order,
			CostHint: &commonv1.CostHint{EstimatedTokens: in.Cost.Tokens, EstimatedCostUsd: in.Cost.CostUSD, NearLimit: true}}
		summary = in.Task
	} else {
		var err error
		if p, err = decodeProposal(in.Proposal); err != nil {
			return app.ApprovalRequest{}, err
		}
	}
	p.JobId = in.JobID
	res, err := a.Client.RequestApproval(ctx, &approvalv1.RequestApprovalRequest{
		Proposal: p, SessionId: in.SessionID, Channel: in.Channel, RequestedBy: actorProto(in.By),
		Route: routeEnum(in.Route), Locale: string(in.Locale), AnswerOnly: in.AnswerOnly,
		CostConfirmation: in.Cost != nil, Summary: summary,
	})
	if err != nil {
		return app.ApprovalRequest{}, classify(approvalPeer, err)
	}
	out := app.ApprovalRequest{Job: jobOf(res.GetJob()), PolicyRule: res.GetPolicyRule(), Reason: res.GetReason(), Text: res.GetRequestText(), Card: res.GetCard()}
	switch res.GetOutcome() {
	case approvalv1.Outcome_OUTCOME_PENDING:
		out.Outcome = app.OutcomePending
	case approvalv1.Outcome_OUTCOME_AUTO_APPROVED:
		out.Outcome = app.OutcomeAutoApproved
	case approvalv1.Outcome_OUTCOME_REFUSED:
		out.Outcome = app.OutcomeRefused
	case approvalv1.Outcome_OUTCOME_ANSWERED:
		out.Outcome = app.OutcomeAnswered
	default:
		out.Outcome = app.Outcome(strings.ToLower(res.GetOutcome().String()))
	}
	return out, nil
}

// Approve implements app.Approvals.
func (a Approvals) Approve(ctx context.Context, jobID string, by app.Actor, loc domain.Locale) (app.ApprovalJob, error) {
	res, err := a.Client.Approve(ctx, &approvalv1.ApproveRequest{JobId: jobID, Actor: actorProto(by), SessionId: by.SessionID, Locale: string(loc)})
	if err != nil {
		return app.ApprovalJob{}, classify(approvalPeer, err)
	}
	return jobOf(res.GetJob()), nil
}

// ApproveSimilar implements app.Approvals.
func (a Approvals) ApproveSimilar(ctx context.Context, jobID string, by app.Actor, ttl time.Duration, loc domain.Locale) (app.ApprovalJob, string, error) {
	req := &approvalv1.ApproveRequest{JobId: jobID, Actor: actorProto(by), Similar: true, Locale: string(loc), SessionId: by.SessionID}
	if ttl > 0 {
		req.SimilarTtl = durationpb.New(ttl)
	}
	res, err := a.Client.Approve(ctx, req)
	if err != nil {
		return app.ApprovalJob{}, "", classify(approvalPeer, err)
	}
	return jobOf(res.GetJob()), res.GetStatusText(), nil
}

// Deny implements app.Approvals.
func (a Approvals) Deny(ctx context.Context, jobID string, by app.Actor, reason string, loc domain.Locale) (app.ApprovalJob, error) {
	res, err := a.Client.Deny(ctx, &approvalv1.DenyRequest{JobId: jobID, Actor: actorProto(by), Reason: reason, SessionId: by.SessionID, Locale: string(loc)})
	if err != nil {
		return app.ApprovalJob{}, classify(approvalPeer, err)
	}
	return jobOf(res.GetJob()), nil
}

// Job implements app.Approvals.
func (a Approvals) Job(ctx context.Context, jobID string) (app.ApprovalJob, error) {
	res, err := a.Client.GetJob(ctx, &approvalv1.GetJobRequest{JobId: jobID})
	if err != nil {
		return app.ApprovalJob{}, classify(approvalPeer, err)
	}
	return jobOf(res.GetJob()), nil
}

// SetAutoApprove implements app.Approvals.
func (a Approvals) SetAutoApprove(ctx context.Context, in app.AutoApproveInput) (string, error) {
	req := &approvalv1.SetAutoApproveRequest{Actor: actorProto(in.By), PathPrefixes: in.Paths, AllowedOperations: in.Ops, Locale: string(in.Locale)}
	if in.TTL > 0 {
		req.Ttl = durationpb.New(in.TTL)
	}
	for _, tt := range in.TaskTypes {
		req.TaskTypes = append(req.TaskTypes, commonv1.TaskType(commonv1.TaskType_value["TASK_TYPE_"+strings.ToUpper(tt)]))
	}
	for _, r := range in.Routes {
		req.Routes = append(req.Routes, routeEnum(r))
	}
	res, err := a.Client.SetAutoApprove(ctx, req)
	if err != nil {
		return "", classify(approvalPeer, err)
	}
	return res.GetStatusText(), nil
}

// DisableAutoApprove implements app.Approvals.
func (a Approvals) DisableAutoApprove(ctx context.Context, by app.Actor, loc domain.Locale) (string, error) {
	res, err := a.Client.DisableAutoApprove(ctx, &approvalv1.DisableAutoApproveRequest{Actor: actorProto(by), Locale: string(loc)})
	if err != nil {
		return "", classify(approvalPeer, err)
	}
	return res.GetStatusText(), nil
}

// AutoApproveStatus implements app.Approvals.
func (a Approvals) AutoApproveStatus(ctx context.Context, loc domain.Locale) (app.AutoApproveStatus, error) {
	res, err := a.Client.GetAutoApprove(ctx, &approvalv1.GetAutoApproveRequest{Locale: string(loc)})
	if err != nil {
		return app.AutoApproveStatus{}, classify(approvalPeer, err)
	}
	return app.AutoApproveStatus{Active: res.GetGrant().GetActive(), Text: res.GetStatusText()}, nil
}

var _ app.ImageAudit = Approvals{}

// RecordImage writes the image's audit record in approval.
func (a Approvals) RecordImage(ctx context.Context, in app.ImageRecord) error {
	if _, err := a.Client.RecordImage(ctx, &approvalv1.RecordImageRequest{JobId: in.JobID, SessionId: in.SessionID, Data: in.Data,
		MimeType: in.MIMEType, Provider: in.Provider, Model: in.Model}); err != nil {
		return classify(approvalPeer, err)
	}
	return nil
}
