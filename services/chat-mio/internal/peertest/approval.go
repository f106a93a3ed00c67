package peertest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"path"
	"strings"
	"sync"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/durationpb"
	"google.golang.org/protobuf/types/known/timestamppb"

	approvalv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/approval/v1"
	"github.com/picoclaw-suite/picoclaw/gen/picoclaw/approval/v1/approvalv1connect"
	commonv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/common/v1"
	"github.com/picoclaw-suite/picoclaw/pkg/jobid"
)

// PatchCommand is one command of the JSON patch format (SPEC §6).
type PatchCommand struct {
	Type    string `json:"type"`
	Action  string `json:"action"`
	Target  string `json:"target"`
	Content string `json:"content,omitempty"`
}

// Patch encodes commands in the JSON patch format.
func Patch(cmds ...PatchCommand) string {
	b, _ := json.Marshal(cmds)
	return string(b)
}

// Approval is the approval service: state machine, hard-require policy, Auto-Approve grant
// with path/task/route scope and TTL, approvers and an append-only event log per job.
type Approval struct {
	approvalv1connect.UnimplementedApprovalServiceHandler
	Approvers map[string]bool
	// Down makes every call fail with Unavailable.
	Down bool

	mu      sync.Mutex
	jobs    map[string]*approvalv1.Job
	patches map[string]string
	events  map[string][]*approvalv1.JobEvent
	grant   *approvalv1.AutoApproveGrant
	// Baggage records the job_id seen in baggage per procedure.
	Baggage []string
}

// NewApproval returns an approval service whose approvers are ids.
func NewApproval(ids ...string) *Approval {
	a := &Approval{Approvers: map[string]bool{}, jobs: map[string]*approvalv1.Job{}, patches: map[string]string{},
		events: map[string][]*approvalv1.JobEvent{}}
	for _, id := range ids {
		a.Approvers[id] = true
	}
	return a
}

func (a *Approval) enter(ctx context.Context) error {
	a.Baggage = append(a.Baggage, jobid.FromContext(ctx))
	if a.Down {
		return connect.NewError(connect.CodeUnavailable, errors.New("approval store unavailable"))
	}
	return nil
}

func (a *Approval) event(job, typ string, actor *commonv1.Actor, payload map[string]any, rule string) {
	evs := a.events[job]
	prev := ""
	if len(evs) > 0 {
		prev = evs[len(evs)-1].GetHash()
	}
	p, _ := json.Marshal(payload)
	sum := sha256.Sum256([]byte(prev + job + typ + string(p)))
	a.events[job] = append(evs, &approvalv1.JobEvent{JobId: job, Seq: int64(len(evs) + 1), Type: typ, Actor: actor,
		Channel: actor.GetChannel(), PayloadJson: string(p), PolicyRule: rule, PrevHash: prev, Hash: hex.EncodeToString(sum[:]),
		CreatedAt: timestamppb.Now()})
	if j := a.jobs[job]; j != nil {
		j.Version = int64(len(a.events[job]))
	}
}

// Events returns a job's events.
func (a *Approval) Events(job string) []*approvalv1.JobEvent {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]*approvalv1.JobEvent(nil), a.events[job]...)
}

// Job returns a copy of a job.
func (a *Approval) Job(id string) *approvalv1.Job {
	a.mu.Lock()
	defer a.mu.Unlock()
	if j := a.jobs[id]; j != nil {
		return proto.CloneOf(j)
	}
	return nil
}

// SeenBaggage returns the job ids seen in baggage, in call order.
func (a *Approval) SeenBaggage() []string {
	a.mu.Lock()
	defer a.mu.Unlock()
	return append([]string(nil), a.Baggage...)
}

func (a *Approval) grantActive(now time.Time) bool {
	return a.grant != nil && a.grant.GetActive() && now.Before(a.grant.GetExpiresAt().AsTime())
}

// underPrefix matches on path-component boundaries.
func underPrefix(p, prefix string) bool {
	p, prefix = path.Clean(p), strings.TrimSuffix(path.Clean(prefix), "/")
	return p == prefix || strings.HasPrefix(p, prefix+"/")
}

// RequestApproval implements the handler.
func (a *Approval) RequestApproval(ctx context.Context, req *approvalv1.RequestApprovalRequest) (*approvalv1.RequestApprovalResponse, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if err := a.enter(ctx); err != nil {
		return nil, err
	}
	p := req.GetProposal()
	id, err := jobid.Normalize(p.GetJobId())
	if err != nil {
		return nil, connect.NewError(connect.CodeInvalidArgument, err)
	}
	if _, ok := a.jobs[id]; ok {
		return nil, connect.NewError(connect.CodeAlreadyExists, fmt.Errorf("job %s already exists", id))
	}
	var cmds []PatchCommand
	if err := json.Unmarshal([]byte(p.GetPatch()), &cmds); err != nil {
		return nil, connect.NewError(connect.CodeInvalidArgument, fmt.Errorf("patch: %w", err))
	}
	job := &approvalv1.Job{JobId: id, Route: req.GetRoute(), SessionId: req.GetSessionId(), Channel: req.GetChannel(),
		Summary: strings.SplitN(p.GetPlan(), "\n", 2)[0], Plan: p.GetPlan(), Patch: p.GetPatch(), Risk: p.GetRisk(),
		TaskType: p.GetTaskType(), Order: p.GetOrder(), RequestedBy: req.GetRequestedBy(), RequestedAt: timestamppb.Now(),
		ExpiresAt: timestamppb.New(time.Now().Add(30 * time.Minute))}
	sum := sha256.Sum256([]byte(p.GetPatch()))
	job.ContentHash = hex.EncodeToString(sum[:])
	hard := ""
	for i, c := range cmds {
		op := &approvalv1.Operation{Index: int32(i), Type: c.Type, Action: c.Action, Target: c.Target}
		switch {
		case c.Action == "delete" || c.Action == "rename":
			op.Flags = []string{c.Action}
			hard = "hard_require:" + c.Action
		case c.Type == "shell_command" || c.Type == "browser":
			op.Flags = []string{c.Type}
			hard = "hard_require:" + c.Type
		}
		job.Operations = append(job.Operations, op)
		if c.Type == "file_edit" {
			job.AffectedPaths = append(job.AffectedPaths, c.Target)
		}
	}
	a.jobs[id] = job
	a.patches[id] = p.GetPatch()
	a.event(id, "requested", req.GetRequestedBy(), map[string]any{"route": req.GetRoute().String()}, "")
	outcome, rule := approvalv1.Outcome_OUTCOME_PENDING, "ask"
	if hard != "" {
		rule = hard
	} else if a.grantActive(time.Now()) && a.inScope(job) {
		outcome, rule = approvalv1.Outcome_OUTCOME_AUTO_APPROVED, "auto_approve"
	}
	job.PolicyRule = rule
	if outcome == approvalv1.Outcome_OUTCOME_AUTO_APPROVED {
		job.Status = approvalv1.JobStatus_JOB_STATUS_AUTO_APPROVED
		a.event(id, "auto_approved", &commonv1.Actor{Id: "policy", Channel: "system"}, nil, rule)
	} else {
		job.Status = approvalv1.JobStatus_JOB_STATUS_PENDING
	}
	text := fmt.Sprintf("承認リクエスト %s\n%s\n対象: %s\n返答: /approve %s または /deny %s [理由]", id, job.GetSummary(),
		strings.Join(job.GetAffectedPaths(), ", "), id, id)
	if req.GetLocale() == "en" {
		text = fmt.Sprintf("Approval request %s\n%s\nFiles: %s\nAnswer: /approve %s or /deny %s [reason]", id, job.GetSummary(),
			strings.Join(job.GetAffectedPaths(), ", "), id, id)
	}
	return &approvalv1.RequestApprovalResponse{Job: proto.CloneOf(job), Outcome: outcome, PolicyRule: rule, RequestText: text}, nil
}

func (a *Approval) inScope(job *approvalv1.Job) bool {
	g := a.grant
	if len(g.GetPathPrefixes()) > 0 {
		for _, p := range job.GetAffectedPaths() {
			ok := false
			for _, pre := range g.GetPathPrefixes() {
				ok = ok || underPrefix(p, pre)
			}
			if !ok {
				return false
			}
		}
	}
	if len(g.GetTaskTypes()) > 0 {
		ok := false
		for _, tt := range g.GetTaskTypes() {
			ok = ok || tt == job.GetTaskType()
		}
		if !ok {
			return false
		}
	}
	if len(g.GetRoutes()) > 0 {
		ok := false
		for _, r := range g.GetRoutes() {
			ok = ok || r == job.GetRoute()
		}
		if !ok {
			return false
		}
	}
	return true
}

func (a *Approval) decide(ctx context.Context, id string, actor *commonv1.Actor, grant bool, reason string) (*approvalv1.Job, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if err := a.enter(ctx); err != nil {
		return nil, err
	}
	id, err := jobid.Normalize(id)
	if err != nil {
		return nil, connect.NewError(connect.CodeInvalidArgument, err)
	}
	job := a.jobs[id]
	if job == nil {
		return nil, connect.NewError(connect.CodeNotFound, fmt.Errorf("job %s not found", id))
	}
	if !a.Approvers[actor.GetId()] {
		a.event(id, "decision_rejected", actor, map[string]any{"reason": "not an approver"}, "approvers")
		return nil, connect.NewError(connect.CodePermissionDenied, fmt.Errorf("%s is not an approver", actor.GetId()))
	}
	if job.GetStatus() != approvalv1.JobStatus_JOB_STATUS_PENDING {
		a.event(id, "decision_rejected", actor, map[string]any{"reason": "already " + job.GetStatus().String()}, "")
		return nil, connect.NewError(connect.CodeFailedPrecondition, fmt.Errorf("job %s is %s", id, job.GetStatus()))
	}
	job.DecidedBy, job.DecidedAt = actor, timestamppb.Now()
	if grant {
		job.Status = approvalv1.JobStatus_JOB_STATUS_GRANTED
		a.event(id, "granted", actor, nil, "approver")
	} else {
		job.Status, job.DenyReason = approvalv1.JobStatus_JOB_STATUS_DENIED, reason
		a.event(id, "denied", actor, map[string]any{"reason": reason}, "approver")
	}
	return proto.CloneOf(job), nil
}

// Approve implements the handler.
func (a *Approval) Approve(ctx context.Context, req *approvalv1.ApproveRequest) (*approvalv1.ApproveResponse, error) {
	j, err := a.decide(ctx, req.GetJobId(), req.GetActor(), true, "")
	if err != nil {
		return nil, err
	}
	return &approvalv1.ApproveResponse{Job: j}, nil
}

// Deny implements the handler.
func (a *Approval) Deny(ctx context.Context, req *approvalv1.DenyRequest) (*approvalv1.DenyResponse, error) {
	j, err := a.decide(ctx, req.GetJobId(), req.GetActor(), false, req.GetReason())
	if err != nil {
		return nil, err
	}
	return &approvalv1.DenyResponse{Job: j}, nil
}

// GetJob implements the handler.
func (a *Approval) GetJob(ctx context.Context, req *approvalv1.GetJobRequest) (*approvalv1.GetJobResponse, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if err := a.enter(ctx); err != nil {
		return nil, err
	}
	j := a.jobs[strings.ToLower(strings.TrimSpace(req.GetJobId()))]
	if j == nil {
		return nil, connect.NewError(connect.CodeNotFound, fmt.Errorf("job %s not found", req.GetJobId()))
	}
	return &approvalv1.GetJobResponse{Job: proto.CloneOf(j)}, nil
}

// ClaimJob implements the handler: one atomic compare-and-set from granted/auto_approved.
func (a *Approval) ClaimJob(ctx context.Context, req *approvalv1.ClaimJobRequest) (*approvalv1.ClaimJobResponse, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if err := a.enter(ctx); err != nil {
		return nil, err
	}
	j := a.jobs[req.GetJobId()]
	if j == nil {
		return nil, connect.NewError(connect.CodeNotFound, fmt.Errorf("job %s not found", req.GetJobId()))
	}
	auto := j.GetStatus() == approvalv1.JobStatus_JOB_STATUS_AUTO_APPROVED
	if j.GetStatus() != approvalv1.JobStatus_JOB_STATUS_GRANTED && !auto {
		return nil, connect.NewError(connect.CodeFailedPrecondition, fmt.Errorf("job %s is %s, not approved", j.GetJobId(), j.GetStatus()))
	}
	if auto && !a.grantActive(time.Now()) {
		return nil, connect.NewError(connect.CodeFailedPrecondition, fmt.Errorf("job %s: auto-approve was turned off", j.GetJobId()))
	}
	j.Status, j.ExecutedAt = approvalv1.JobStatus_JOB_STATUS_EXECUTING, timestamppb.Now()
	a.event(j.GetJobId(), "execution_started", &commonv1.Actor{Id: req.GetExecutorId(), Channel: "system"}, nil, "")
	return &approvalv1.ClaimJobResponse{Job: proto.CloneOf(j), Patch: a.patches[j.GetJobId()], ContentHash: j.GetContentHash(), AutoApproved: auto}, nil
}

// ReportExecution implements the handler.
func (a *Approval) ReportExecution(ctx context.Context, req *approvalv1.ReportExecutionRequest) (*approvalv1.ReportExecutionResponse, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if err := a.enter(ctx); err != nil {
		return nil, err
	}
	j := a.jobs[req.GetJobId()]
	if j == nil {
		return nil, connect.NewError(connect.CodeNotFound, fmt.Errorf("job %s not found", req.GetJobId()))
	}
	actor := &commonv1.Actor{Id: req.GetExecutorId(), Channel: "system"}
	switch req.GetEvent() {
	case approvalv1.ExecutionEvent_EXECUTION_EVENT_COMPLETED:
		j.Status, j.Result, j.FinishedAt = approvalv1.JobStatus_JOB_STATUS_COMPLETED, req.GetResult(), timestamppb.Now()
		a.event(j.GetJobId(), "execution_completed", actor, map[string]any{"summary": req.GetResult().GetSummary()}, "")
	case approvalv1.ExecutionEvent_EXECUTION_EVENT_FAILED:
		j.Status, j.Result, j.FinishedAt = approvalv1.JobStatus_JOB_STATUS_FAILED, req.GetResult(), timestamppb.Now()
		a.event(j.GetJobId(), "execution_failed", actor, map[string]any{"detail": req.GetDetail()}, "")
	}
	return &approvalv1.ReportExecutionResponse{Job: proto.CloneOf(j)}, nil
}

// ListJobEvents implements the handler.
func (a *Approval) ListJobEvents(ctx context.Context, req *approvalv1.ListJobEventsRequest) (*approvalv1.ListJobEventsResponse, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if err := a.enter(ctx); err != nil {
		return nil, err
	}
	return &approvalv1.ListJobEventsResponse{Events: append([]*approvalv1.JobEvent(nil), a.events[req.GetJobId()]...), ChainValid: true}, nil
}

func (a *Approval) statusText(loc string) string {
	if !a.grantActive(time.Now()) {
		if loc == "en" {
			return "Auto-Approve: off"
		}
		return "Auto-Approve: 無効"
	}
	g := a.grant
	return fmt.Sprintf("Auto-Approve: on paths=%s remaining=%s", strings.Join(g.GetPathPrefixes(), ","),
		time.Until(g.GetExpiresAt().AsTime()).Round(time.Second))
}

// SetAutoApprove implements the handler (TTL default 60m, capped at 24h; approvers only).
func (a *Approval) SetAutoApprove(ctx context.Context, req *approvalv1.SetAutoApproveRequest) (*approvalv1.SetAutoApproveResponse, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if err := a.enter(ctx); err != nil {
		return nil, err
	}
	if !a.Approvers[req.GetActor().GetId()] {
		return nil, connect.NewError(connect.CodePermissionDenied, fmt.Errorf("%s is not an approver", req.GetActor().GetId()))
	}
	ttl := 60 * time.Minute
	if req.GetTtl() != nil {
		ttl = req.GetTtl().AsDuration()
	}
	if ttl > 24*time.Hour {
		ttl = 24 * time.Hour
	}
	now := time.Now()
	a.grant = &approvalv1.AutoApproveGrant{Active: true, TaskTypes: req.GetTaskTypes(), Routes: req.GetRoutes(),
		PathPrefixes: req.GetPathPrefixes(), AllowedOperations: req.GetAllowedOperations(), CreatedBy: req.GetActor(), CreatedAt: timestamppb.New(now),
		ExpiresAt: timestamppb.New(now.Add(ttl)), Remaining: durationpb.New(ttl)}
	return &approvalv1.SetAutoApproveResponse{Grant: proto.CloneOf(a.grant), StatusText: a.statusText(req.GetLocale())}, nil
}

// GetAutoApprove implements the handler.
func (a *Approval) GetAutoApprove(ctx context.Context, req *approvalv1.GetAutoApproveRequest) (*approvalv1.GetAutoApproveResponse, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if err := a.enter(ctx); err != nil {
		return nil, err
	}
	g := &approvalv1.AutoApproveGrant{}
	if a.grantActive(time.Now()) {
		g = proto.CloneOf(a.grant)
	}
	return &approvalv1.GetAutoApproveResponse{Grant: g, StatusText: a.statusText(req.GetLocale())}, nil
}

// DisableAutoApprove implements the handler.
func (a *Approval) DisableAutoApprove(ctx context.Context, req *approvalv1.DisableAutoApproveRequest) (*approvalv1.DisableAutoApproveResponse, error) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if err := a.enter(ctx); err != nil {
		return nil, err
	}
	if !a.Approvers[req.GetActor().GetId()] {
		return nil, connect.NewError(connect.CodePermissionDenied, fmt.Errorf("%s is not an approver", req.GetActor().GetId()))
	}
	a.grant = nil
	return &approvalv1.DisableAutoApproveResponse{StatusText: a.statusText(req.GetLocale())}, nil
}

// SetDown switches the Unavailable failure mode.
func (a *Approval) SetDown(down bool) {
	a.mu.Lock()
	defer a.mu.Unlock()
	a.Down = down
}
