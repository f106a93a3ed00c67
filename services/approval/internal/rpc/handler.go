// Package rpc maps the Connect API of approval onto its use cases.
package rpc

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"
	"strings"
	"time"

	"connectrpc.com/connect"

	"github.com/picoclaw-suite/picoclaw/pkg/enum"
	"github.com/picoclaw-suite/picoclaw/pkg/svcauth"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	approvalv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/approval/v1"
	"github.com/picoclaw-suite/picoclaw/gen/picoclaw/approval/v1/approvalv1connect"
	commonv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/common/v1"
	"github.com/picoclaw-suite/picoclaw/services/approval/internal/app"
	"github.com/picoclaw-suite/picoclaw/services/approval/internal/domain"
)

// Handler implements approvalv1connect.ApprovalServiceHandler.
type Handler struct {
	svc *app.Service
	log *slog.Logger
	now func() time.Time
}

var _ approvalv1connect.ApprovalServiceHandler = (*Handler)(nil)

// NewHandler builds the handler.
func NewHandler(svc *app.Service, log *slog.Logger) *Handler {
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Handler{svc: svc, log: log, now: time.Now}
}

func (h *Handler) fail(ctx context.Context, err error) error { return toConnect(ctx, h.log, err) }

// failIn is fail for a request that names the user's locale.
func (h *Handler) failIn(ctx context.Context, err error, locale string) error {
	return toConnectIn(ctx, h.log, err, locale)
}

// RequestApproval stores a proposal, evaluates policy and returns the request text.
func (h *Handler) RequestApproval(ctx context.Context, req *approvalv1.RequestApprovalRequest) (*approvalv1.RequestApprovalResponse, error) {
	requester, err := verifiedActor(ctx, req.GetRequestedBy())
	if err != nil {
		return nil, err
	}
	p := req.GetProposal()
	if p == nil {
		return nil, h.fail(ctx, fmt.Errorf("%w: proposal is required", domain.ErrInvalid))
	}
	res, err := h.svc.RequestApproval(ctx, app.RequestInput{
		JobID: p.GetJobId(), Plan: p.GetPlan(), Patch: p.GetPatch(), Risk: riskFromProto(p.GetRisk()),
		Cost: costFromProto(p.GetCostHint()), UsesBrowser: p.GetUsesBrowser(), TaskType: TaskTypeName(p.GetTaskType()),
		Order: p.GetOrder(), Route: RouteName(req.GetRoute()), SessionID: req.GetSessionId(), Channel: requester.Channel,
		RequestedBy: requester, Summary: req.GetSummary(), Locale: req.GetLocale(), AnswerOnly: req.GetAnswerOnly(),
		CostConfirmation: req.GetCostConfirmation(),
	})
	if err != nil {
		return nil, h.failIn(ctx, err, req.GetLocale())
	}
	locale := res.Job.Locale
	if locale == "" {
		locale = req.GetLocale()
	}
	return &approvalv1.RequestApprovalResponse{
		Job: JobToProto(res.Job), Outcome: outcomes.Wire(res.Decision.Outcome), PolicyRule: res.Decision.Rule, PolicyHash: res.Decision.PolicyHash,
		Reason: domain.SafeLine(res.Decision.ReasonIn(locale), 300), ReasonCode: res.Decision.ReasonCode, ReasonArgs: res.Decision.ReasonArgs,
		RequestText: res.Text, Card: cardToProto(res.Card),
	}, nil
}

// HighestJobNumber answers where the audit store's JobIDs of a day end.
func (h *Handler) HighestJobNumber(ctx context.Context, req *approvalv1.HighestJobNumberRequest) (*approvalv1.HighestJobNumberResponse, error) {
	n, err := h.svc.HighestJobNumber(ctx, req.GetDay())
	if err != nil {
		return nil, h.fail(ctx, err)
	}
	return &approvalv1.HighestJobNumberResponse{Number: n}, nil
}

// GetJob returns one job.
func (h *Handler) GetJob(ctx context.Context, req *approvalv1.GetJobRequest) (*approvalv1.GetJobResponse, error) {
	j, err := h.svc.Get(ctx, req.GetJobId())
	if err != nil {
		return nil, h.fail(ctx, err)
	}
	return &approvalv1.GetJobResponse{Job: JobToProto(j)}, nil
}

// ListJobs lists jobs newest first; the page token is an offset.
func (h *Handler) ListJobs(ctx context.Context, req *approvalv1.ListJobsRequest) (*approvalv1.ListJobsResponse, error) {
	f := app.ListFilter{SessionID: req.GetSessionId(), Limit: int(req.GetPageSize())}
	for _, s := range req.GetStatuses() {
		f.Statuses = append(f.Statuses, statusFromProto(s))
	}
	if t := req.GetPageToken(); t != "" {
		off, err := strconv.Atoi(t)
		if err != nil || off < 0 {
			return nil, h.fail(ctx, fmt.Errorf("%w: bad page token", domain.ErrInvalid))
		}
		f.Offset = off
	}
	if f.Limit <= 0 || f.Limit > 500 {
		f.Limit = 100
	}
	jobs, err := h.svc.List(ctx, f)
	if err != nil {
		return nil, h.fail(ctx, err)
	}
	out := &approvalv1.ListJobsResponse{}
	for _, j := range jobs {
		out.Jobs = append(out.Jobs, JobToProto(j))
	}
	if len(jobs) == f.Limit {
		out.NextPageToken = strconv.Itoa(f.Offset + f.Limit)
	}
	return out, nil
}

// Approve grants a pending job.
func (h *Handler) Approve(ctx context.Context, req *approvalv1.ApproveRequest) (*approvalv1.ApproveResponse, error) {
	actor, err := verifiedActor(ctx, req.GetActor())
	if err != nil {
		return nil, err
	}
	if req.GetSimilar() {
		res, err := h.svc.ApproveSimilar(ctx, req.GetJobId(), actor, req.GetSimilarTtl().AsDuration(), req.GetSessionId())
		if err != nil {
			return nil, h.failIn(ctx, err, req.GetLocale())
		}
		now := time.Now()
		return &approvalv1.ApproveResponse{Job: JobToProto(res.Job), Grant: grantToProto(&res.Grant, now),
			StatusText: domain.SimilarApprovedText(res.Job.ID, &res.Grant, now, req.GetLocale())}, nil
	}
	j, err := h.svc.Approve(ctx, req.GetJobId(), actor, req.GetSessionId())
	if err != nil {
		return nil, h.failIn(ctx, err, req.GetLocale())
	}
	return &approvalv1.ApproveResponse{Job: JobToProto(j)}, nil
}

// Deny refuses a pending job.
func (h *Handler) Deny(ctx context.Context, req *approvalv1.DenyRequest) (*approvalv1.DenyResponse, error) {
	actor, err := verifiedActor(ctx, req.GetActor())
	if err != nil {
		return nil, err
	}
	j, err := h.svc.Deny(ctx, req.GetJobId(), actor, req.GetReason(), req.GetSessionId())
	if err != nil {
		return nil, h.failIn(ctx, err, req.GetLocale())
	}
	return &approvalv1.DenyResponse{Job: JobToProto(j)}, nil
}

// Cancel withdraws an unclaimed job.
func (h *Handler) Cancel(ctx context.Context, req *approvalv1.CancelRequest) (*approvalv1.CancelResponse, error) {
	actor, err := verifiedActor(ctx, req.GetActor())
	if err != nil {
		return nil, err
	}
	j, err := h.svc.Cancel(ctx, req.GetJobId(), actor, req.GetReason())
	if err != nil {
		return nil, h.fail(ctx, err)
	}
	return &approvalv1.CancelResponse{Job: JobToProto(j)}, nil
}

// ClaimJob hands the approved content to the executor once.
func (h *Handler) ClaimJob(ctx context.Context, req *approvalv1.ClaimJobRequest) (*approvalv1.ClaimJobResponse, error) {
	j, err := h.svc.ClaimJob(ctx, req.GetJobId(), req.GetExecutorId())
	if err != nil {
		return nil, h.failIn(ctx, err, req.GetLocale())
	}
	return &approvalv1.ClaimJobResponse{Job: JobToProto(j), Patch: j.Patch, ContentHash: j.ContentHash, AutoApproved: j.AutoApproved,
		LeaseToken: j.ClaimToken, LeaseExpiresAt: ts(j.LeaseExpiresAt)}, nil
}

// RenewClaim extends the lease of a claim its holder still runs.
func (h *Handler) RenewClaim(ctx context.Context, req *approvalv1.RenewClaimRequest) (*approvalv1.RenewClaimResponse, error) {
	j, err := h.svc.RenewClaim(ctx, req.GetJobId(), req.GetExecutorId(), req.GetLeaseToken())
	if err != nil {
		return nil, h.fail(ctx, err)
	}
	return &approvalv1.RenewClaimResponse{LeaseExpiresAt: ts(j.LeaseExpiresAt)}, nil
}

// ListLapsedClaims lists executing jobs whose holder stopped renewing its lease.
func (h *Handler) ListLapsedClaims(ctx context.Context, req *approvalv1.ListLapsedClaimsRequest) (*approvalv1.ListLapsedClaimsResponse, error) {
	ids, err := h.svc.LapsedClaims(ctx, int(req.GetPageSize()))
	if err != nil {
		return nil, h.fail(ctx, err)
	}
	return &approvalv1.ListLapsedClaimsResponse{JobIds: ids}, nil
}

// ReportExecution records the executor's progress.
func (h *Handler) ReportExecution(ctx context.Context, req *approvalv1.ReportExecutionRequest) (*approvalv1.ReportExecutionResponse, error) {
	kind, ok := executionKinds.Lookup(req.GetEvent())
	if !ok {
		return nil, h.fail(ctx, fmt.Errorf("%w: event is required", domain.ErrInvalid))
	}
	var result []byte
	if r := req.GetResult(); r != nil {
		b, err := protojson.Marshal(r)
		if err != nil {
			return nil, h.fail(ctx, fmt.Errorf("%w: result: %v", domain.ErrInvalid, err))
		}
		result = b
	}
	j, err := h.svc.ReportExecution(ctx, req.GetJobId(), kind, req.GetExecutorId(), req.GetLeaseToken(), result, req.GetDetail())
	if err != nil {
		return nil, h.fail(ctx, err)
	}
	return &approvalv1.ReportExecutionResponse{Job: JobToProto(j)}, nil
}

// ListJobEvents returns the audit trail and whether its chain verifies.
func (h *Handler) ListJobEvents(ctx context.Context, req *approvalv1.ListJobEventsRequest) (*approvalv1.ListJobEventsResponse, error) {
	evs, valid, err := h.svc.Events(ctx, req.GetJobId())
	if err != nil {
		return nil, h.fail(ctx, err)
	}
	out := &approvalv1.ListJobEventsResponse{ChainValid: valid}
	for _, e := range evs {
		out.Events = append(out.Events, &approvalv1.JobEvent{
			JobId: e.JobID, Seq: e.Seq, Type: string(e.Type), Actor: actorToProto(e.Actor), Channel: e.Channel,
			PayloadJson: string(e.Payload), PolicyRule: e.PolicyRule, PrevHash: e.PrevHash, Hash: e.Hash,
			CreatedAt: timestamppb.New(e.At),
		})
	}
	return out, nil
}

// GetAutoApprove reports the grant and a status text.
func (h *Handler) GetAutoApprove(ctx context.Context, req *approvalv1.GetAutoApproveRequest) (*approvalv1.GetAutoApproveResponse, error) {
	st := h.svc.AutoApproveStatus(ctx)
	now := h.now()
	return &approvalv1.GetAutoApproveResponse{Grant: grantToProto(st.Grant, now),
		StatusText: domain.GrantStatusText(st.Grant, now, req.GetLocale(), st.Unavailable)}, nil
}

// SetAutoApprove switches Auto-Approve on with a scope and TTL.
func (h *Handler) SetAutoApprove(ctx context.Context, req *approvalv1.SetAutoApproveRequest) (*approvalv1.SetAutoApproveResponse, error) {
	in := app.GrantInput{PathPrefixes: req.GetPathPrefixes(), DeniedOperations: req.GetDeniedOperations(),
		AllowedOperations: req.GetAllowedOperations(), Reason: req.GetReason()}
	if d := req.GetTtl(); d != nil {
		in.TTL = d.AsDuration()
	}
	for _, t := range req.GetTaskTypes() {
		in.TaskTypes = append(in.TaskTypes, TaskTypeName(t))
	}
	for _, r := range req.GetRoutes() {
		in.Routes = append(in.Routes, RouteName(r))
	}
	actor, err := verifiedActor(ctx, req.GetActor())
	if err != nil {
		return nil, err
	}
	g, err := h.svc.EnableAutoApprove(ctx, actor, in)
	if err != nil {
		return nil, h.failIn(ctx, err, req.GetLocale())
	}
	now := h.now()
	return &approvalv1.SetAutoApproveResponse{Grant: grantToProto(&g, now), StatusText: domain.GrantStatusText(&g, now, req.GetLocale(), false)}, nil
}

// DisableAutoApprove switches Auto-Approve off at once.
func (h *Handler) DisableAutoApprove(ctx context.Context, req *approvalv1.DisableAutoApproveRequest) (*approvalv1.DisableAutoApproveResponse, error) {
	actor, err := verifiedActor(ctx, req.GetActor())
	if err != nil {
		return nil, err
	}
	n, err := h.svc.DisableAutoApprove(ctx, actor, req.GetReason())
	if err != nil {
		return nil, h.failIn(ctx, err, req.GetLocale())
	}
	text := fmt.Sprintf("Auto-Approve: OFF（承認待ちに戻したジョブ: %d 件）", n)
	if strings.HasPrefix(strings.ToLower(req.GetLocale()), "en") {
		text = fmt.Sprintf("Auto-Approve: OFF (%d auto-approved jobs are waiting for approval again)", n)
	}
	return &approvalv1.DisableAutoApproveResponse{StatusText: text}, nil
}

// RouteName turns ROUTE_CODE1 into CODE1 ("" for unspecified).
func RouteName(r commonv1.Route) string {
	if r == commonv1.Route_ROUTE_UNSPECIFIED {
		return ""
	}
	return strings.TrimPrefix(r.String(), "ROUTE_")
}

// TaskTypeName turns TASK_TYPE_DOCS into docs ("" for unspecified).
func TaskTypeName(t commonv1.TaskType) string {
	if t == commonv1.TaskType_TASK_TYPE_UNSPECIFIED {
		return ""
	}
	return strings.ToLower(strings.TrimPrefix(t.String(), "TASK_TYPE_"))
}

func routeFromName(s string) commonv1.Route {
	return commonv1.Route(commonv1.Route_value["ROUTE_"+s])
}

func taskTypeFromName(s string) commonv1.TaskType {
	return commonv1.TaskType(commonv1.TaskType_value["TASK_TYPE_"+strings.ToUpper(s)])
}

// verifiedActor is the person a call acts for: the principal the channel's gateway vouched for
// (verified by the server's interceptor). An actor in the request body is never trusted: when
// one is sent it must be that principal.
func verifiedActor(ctx context.Context, claimed *commonv1.Actor) (domain.Actor, error) {
	p, ok := svcauth.PrincipalFrom(ctx)
	if !ok {
		return domain.Actor{}, connect.NewError(connect.CodePermissionDenied, errors.New("no verified user: the call must carry the channel's assertion"))
	}
	if c := actorFromProto(claimed); (c.ID != "" || c.Channel != "") && (c.ID != p.User || c.Channel != p.Channel) {
		return domain.Actor{}, connect.NewError(connect.CodePermissionDenied, errors.New("the actor in the request is not the verified user"))
	}
	return domain.Actor{ID: p.User, Channel: p.Channel}, nil
}

func actorFromProto(a *commonv1.Actor) domain.Actor {
	return domain.Actor{ID: strings.TrimSpace(a.GetId()), Channel: strings.ToLower(strings.TrimSpace(a.GetChannel())), DisplayName: a.GetDisplayName()}
}

func actorToProto(a domain.Actor) *commonv1.Actor {
	if a == (domain.Actor{}) {
		return nil
	}
	return &commonv1.Actor{Id: a.ID, Channel: a.Channel, DisplayName: a.DisplayName}
}

func riskFromProto(r *commonv1.Risk) domain.Risk {
	level := ""
	if r.GetLevel() != commonv1.RiskLevel_RISK_LEVEL_UNSPECIFIED {
		level = strings.ToLower(strings.TrimPrefix(r.GetLevel().String(), "RISK_LEVEL_"))
	}
	return domain.Risk{Level: level, Destructive: r.GetDestructive(), CompatibilityIssues: r.GetCompatibilityIssues(),
		RollbackPossible: r.GetRollbackPossible(), Notes: r.GetNotes()}
}

func costFromProto(c *commonv1.CostHint) domain.CostHint {
	return domain.CostHint{EstimatedTokens: c.GetEstimatedTokens(), EstimatedCostUSD: c.GetEstimatedCostUsd(), NearLimit: c.GetNearLimit()}
}

var executionKinds = enum.New(map[domain.ExecutionKind]approvalv1.ExecutionEvent{
	domain.ExecStarted:      approvalv1.ExecutionEvent_EXECUTION_EVENT_STARTED,
	domain.ExecCompleted:    approvalv1.ExecutionEvent_EXECUTION_EVENT_COMPLETED,
	domain.ExecFailed:       approvalv1.ExecutionEvent_EXECUTION_EVENT_FAILED,
	domain.ExecHashMismatch: approvalv1.ExecutionEvent_EXECUTION_EVENT_HASH_MISMATCH,
	domain.ExecRefused:      approvalv1.ExecutionEvent_EXECUTION_EVENT_REFUSED,
})

var statuses = enum.New(map[domain.Status]approvalv1.JobStatus{
	domain.StatusPending:      approvalv1.JobStatus_JOB_STATUS_PENDING,
	domain.StatusGranted:      approvalv1.JobStatus_JOB_STATUS_GRANTED,
	domain.StatusAutoApproved: approvalv1.JobStatus_JOB_STATUS_AUTO_APPROVED,
	domain.StatusDenied:       approvalv1.JobStatus_JOB_STATUS_DENIED,
	domain.StatusExpired:      approvalv1.JobStatus_JOB_STATUS_EXPIRED,
	domain.StatusCancelled:    approvalv1.JobStatus_JOB_STATUS_CANCELLED,
	domain.StatusExecuting:    approvalv1.JobStatus_JOB_STATUS_EXECUTING,
	domain.StatusCompleted:    approvalv1.JobStatus_JOB_STATUS_COMPLETED,
	domain.StatusFailed:       approvalv1.JobStatus_JOB_STATUS_FAILED,
	domain.StatusRefused:      approvalv1.JobStatus_JOB_STATUS_REFUSED,
	domain.StatusAnswered:     approvalv1.JobStatus_JOB_STATUS_ANSWERED,
})

func statusFromProto(s approvalv1.JobStatus) domain.Status {
	if st, ok := statuses.Lookup(s); ok {
		return st
	}
	return domain.Status(strings.ToLower(s.String()))
}

var outcomes = enum.New(map[domain.Outcome]approvalv1.Outcome{
	domain.OutcomeAutoApproved: approvalv1.Outcome_OUTCOME_AUTO_APPROVED,
	domain.OutcomePending:      approvalv1.Outcome_OUTCOME_PENDING,
	domain.OutcomeRefused:      approvalv1.Outcome_OUTCOME_REFUSED,
	domain.OutcomeAnswered:     approvalv1.Outcome_OUTCOME_ANSWERED,
})

func ts(t time.Time) *timestamppb.Timestamp {
	if t.IsZero() {
		return nil
	}
	return timestamppb.New(t)
}

// JobToProto converts the job for the API.
func JobToProto(j domain.Job) *approvalv1.Job {
	out := &approvalv1.Job{
		JobId: j.ID, Status: statuses.Wire(j.Status), Route: routeFromName(j.Route), SessionId: j.SessionID, Channel: j.Channel,
		Summary: j.Summary, Plan: j.Plan, Patch: j.Patch, TaskType: taskTypeFromName(j.TaskType), UsesBrowser: j.UsesBrowser,
		ContentHash: j.ContentHash, AffectedPaths: j.AffectedPaths, Flags: j.Flags, PolicyRule: j.PolicyRule, PolicyHash: j.PolicyHash, Order: j.Order,
		RequestedBy: actorToProto(j.RequestedBy), DecidedBy: actorToProto(j.DecidedBy), DenyReason: j.DenyReason,
		RequestedAt: ts(j.RequestedAt), DecidedAt: ts(j.DecidedAt), ExpiresAt: ts(j.ExpiresAt), ExecutedAt: ts(j.ExecutedAt),
		FinishedAt: ts(j.FinishedAt), Version: j.Version, TraceParent: j.TraceParent,
		CostConfirmation: j.CostConfirmation,
		DiffStats:        &approvalv1.DiffStats{Files: int32(j.Stats.Files), Additions: int32(j.Stats.Additions), Deletions: int32(j.Stats.Deletions)},
		CostHint:         &commonv1.CostHint{EstimatedTokens: j.Cost.EstimatedTokens, EstimatedCostUsd: j.Cost.EstimatedCostUSD, NearLimit: j.Cost.NearLimit},
		Risk: &commonv1.Risk{Level: commonv1.RiskLevel(commonv1.RiskLevel_value["RISK_LEVEL_"+strings.ToUpper(j.Risk.Level)]),
			Destructive: j.Risk.Destructive, CompatibilityIssues: j.Risk.CompatibilityIssues, RollbackPossible: j.Risk.RollbackPossible, Notes: j.Risk.Notes},
	}
	for _, op := range j.Operations {
		flags := make([]string, len(op.Flags))
		for i, f := range op.Flags {
			flags[i] = string(f)
		}
		out.Operations = append(out.Operations, &approvalv1.Operation{Index: int32(op.Index), Type: string(op.Type),
			Action: op.Action, Target: op.Target, ContentSha256: op.ContentSHA256, Flags: flags})
	}
	if len(j.Result) > 0 {
		var r commonv1.ExecutionResult
		if err := (protojson.UnmarshalOptions{DiscardUnknown: true}).Unmarshal(j.Result, &r); err == nil {
			out.Result = &r
		}
	}
	return out
}

func grantToProto(g *domain.Grant, now time.Time) *approvalv1.AutoApproveGrant {
	if !g.ActiveAt(now) {
		return &approvalv1.AutoApproveGrant{Active: false}
	}
	out := &approvalv1.AutoApproveGrant{Active: true, PathPrefixes: g.PathPrefixes, DeniedOperations: g.DeniedOperations,
		AllowedOperations: g.AllowedOperations, OperationKinds: g.OperationKinds, SimilarTo: g.SimilarTo,
		CreatedBy: actorToProto(g.CreatedBy), Reason: g.Reason, CreatedAt: ts(g.CreatedAt), ExpiresAt: ts(g.ExpiresAt),
		Remaining: durationpb.New(g.ExpiresAt.Sub(now))}
	for _, t := range g.TaskTypes {
		out.TaskTypes = append(out.TaskTypes, taskTypeFromName(t))
	}
	for _, r := range g.Routes {
		out.Routes = append(out.Routes, routeFromName(r))
	}
	return out
}

func cardToProto(c *domain.Card) *commonv1.ApprovalCard {
	if c == nil {
		return nil
	}
	out := &commonv1.ApprovalCard{JobId: c.JobID, Title: c.Title, Risk: c.Risk, RiskText: c.RiskText, Summary: c.Summary,
		Facts: c.Facts, ConsoleUrl: c.ConsoleURL, Locale: c.Locale}
	for _, f := range c.Files {
		out.Files = append(out.Files, &commonv1.FileChange{Path: f.Path, Note: f.Note, Lines: f.Lines, More: f.More})
	}
	return out
}

// RecordImage writes one image audit record before chat-mio sends the image to a model.
func (h *Handler) RecordImage(ctx context.Context, req *approvalv1.RecordImageRequest) (*approvalv1.RecordImageResponse, error) {
	rec, err := h.svc.RecordImage(ctx, app.ImageInput{JobID: req.GetJobId(), SessionID: req.GetSessionId(), Data: req.GetData(),
		MIMEType: req.GetMimeType(), Provider: req.GetProvider(), Model: req.GetModel()})
	if err != nil {
		return nil, h.fail(ctx, err)
	}
	return &approvalv1.RecordImageResponse{Record: &approvalv1.ImageRecord{Id: rec.ID, JobId: rec.JobID, SessionId: rec.SessionID,
		Sha256: rec.SHA256, SizeBytes: rec.Size, MimeType: rec.MIMEType, Provider: rec.Provider, Model: rec.Model,
		RecordedAt: timestamppb.New(rec.At), Kept: rec.Kept}}, nil
}
