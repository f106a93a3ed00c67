package peertest

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/types/known/timestamppb"

	approvalv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/approval/v1"
	"github.com/picoclaw-suite/picoclaw/gen/picoclaw/approval/v1/approvalv1connect"
	commonv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/common/v1"
	executorv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/executor/v1"
	"github.com/picoclaw-suite/picoclaw/gen/picoclaw/executor/v1/executorv1connect"
	gatewayv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/gateway/v1"
	"github.com/picoclaw-suite/picoclaw/gen/picoclaw/gateway/v1/gatewayv1connect"
	heartbeatv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/heartbeat/v1"
	"github.com/picoclaw-suite/picoclaw/gen/picoclaw/heartbeat/v1/heartbeatv1connect"
	routerv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/router/v1"
	"github.com/picoclaw-suite/picoclaw/gen/picoclaw/router/v1/routerv1connect"
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

// Executor takes only a job id, claims the approved content from approval over Connect, applies
// the file operations inside Workspace through os.Root and reports the result back.
type Executor struct {
	executorv1connect.UnimplementedExecutorServiceHandler
	Approval  approvalv1connect.ApprovalServiceClient
	Workspace string
	// Delay holds every execution (tests of results delivered after the reply).
	Delay time.Duration

	mu      sync.Mutex
	baggage []string
	calls   int
	down    bool
}

// SetDown makes Execute fail with Unavailable.
func (e *Executor) SetDown(down bool) {
	set(&e.mu, &e.down, down)
}

// SetDelay holds every later execution for d.
func (e *Executor) SetDelay(d time.Duration) {
	set(&e.mu, &e.Delay, d)
}

// SetWorkspace changes the workspace of later executions.
func (e *Executor) SetWorkspace(dir string) {
	set(&e.mu, &e.Workspace, dir)
}

// Calls is how many Execute calls arrived.
func (e *Executor) Calls() int {
	e.mu.Lock()
	defer e.mu.Unlock()
	return e.calls
}

// SeenBaggage returns the job ids seen in baggage.
func (e *Executor) SeenBaggage() []string {
	e.mu.Lock()
	defer e.mu.Unlock()
	return append([]string(nil), e.baggage...)
}

// Execute implements the handler.
func (e *Executor) Execute(ctx context.Context, req *executorv1.ExecuteRequest) (*executorv1.ExecuteResponse, error) {
	e.mu.Lock()
	e.calls++
	e.baggage = append(e.baggage, jobid.FromContext(ctx))
	down, delay, workspace := e.down, e.Delay, e.Workspace
	e.mu.Unlock()
	if down {
		return nil, connect.NewError(connect.CodeUnavailable, errors.New("executor unavailable"))
	}
	if delay > 0 {
		select {
		case <-time.After(delay):
		case <-ctx.Done():
			return nil, connect.NewError(connect.CodeCanceled, ctx.Err())
		}
	}
	claim, err := e.Approval.ClaimJob(ctx, &approvalv1.ClaimJobRequest{JobId: req.GetJobId(), ExecutorId: "executor-test"})
	if err != nil {
		if ce := new(connect.Error); errors.As(err, &ce) {
			return nil, connect.NewError(ce.Code(), fmt.Errorf("claim: %s", ce.Message()))
		}
		return nil, err
	}
	var cmds []PatchCommand
	if err := json.Unmarshal([]byte(claim.GetPatch()), &cmds); err != nil {
		return nil, connect.NewError(connect.CodeInvalidArgument, err)
	}
	root, err := os.OpenRoot(workspace)
	if err != nil {
		return nil, connect.NewError(connect.CodeInternal, err)
	}
	defer root.Close()
	res := &commonv1.ExecutionResult{StartedAt: timestamppb.Now()}
	for i, c := range cmds {
		cr := &commonv1.CommandResult{Index: int32(i), Type: c.Type, Action: c.Action, Target: c.Target}
		var err error
		switch c.Action {
		case "create", "update":
			if dir := filepath.Dir(c.Target); dir != "." {
				err = root.MkdirAll(dir, 0o755)
			}
			if err == nil {
				err = root.WriteFile(c.Target, []byte(c.Content), 0o644)
			}
		case "delete":
			err = root.Remove(c.Target)
		default:
			err = fmt.Errorf("unsupported action %s", c.Action)
		}
		res.Executed++
		if err != nil {
			cr.Error = err.Error()
			res.Failed++
		} else {
			cr.Success = true
			res.Succeeded++
		}
		res.Commands = append(res.Commands, cr)
	}
	res.Success = res.Failed == 0
	res.Summary = fmt.Sprintf("実行: %d 件, 成功: %d 件, 失敗: %d 件", res.Executed, res.Succeeded, res.Failed)
	res.FinishedAt = timestamppb.Now()
	ev := approvalv1.ExecutionEvent_EXECUTION_EVENT_COMPLETED
	if !res.Success {
		ev = approvalv1.ExecutionEvent_EXECUTION_EVENT_FAILED
	}
	if _, err := e.Approval.ReportExecution(ctx, &approvalv1.ReportExecutionRequest{JobId: req.GetJobId(), Event: ev,
		Result: res, ExecutorId: "executor-test", LeaseToken: claim.GetLeaseToken()}); err != nil {
		return nil, err
	}
	text := res.Summary
	if req.GetLocale() == "en" {
		text = fmt.Sprintf("Executed: %d, succeeded: %d, failed: %d", res.Executed, res.Succeeded, res.Failed)
	}
	return &executorv1.ExecuteResponse{Result: res, ResultText: text}, nil
}

// Router decides routes the way router-shiro does for the inputs tests send: routing commands
// first, code fences → CODE, otherwise CHAT; CODE under local_only is refused. CODE routes get
// the proposal from Propose; /plan runs a worker output; /analyze comes back with no usable
// worker result; /research finds Shiro's local model missing (router-shiro's error_reason after
// its restart and retry); /deliberate returns two proposals.
type Router struct {
	routerv1connect.UnimplementedRouterServiceHandler
	// Propose returns the proposal patch and task type for a CODE message.
	Propose func(text string) (patch string, task commonv1.TaskType)
	Down    bool
	// OverLimit, when set, is the estimate of every CODE call: coder-order refuses it
	// (cost_over_limit) unless the request confirms at least that many tokens.
	OverLimit *commonv1.CostHint

	mu       sync.Mutex
	requests []*routerv1.ProcessTaskRequest
	baggage  []string
}

// SetPropose replaces the proposal source.
func (r *Router) SetPropose(f func(text string) (string, commonv1.TaskType)) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.Propose = f
}

// SetOverLimit makes every CODE call cost est (nil: within the limits).
func (r *Router) SetOverLimit(est *commonv1.CostHint) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.OverLimit = est
}

// SetDown makes ProcessTask fail with Unavailable.
func (r *Router) SetDown(down bool) {
	set(&r.mu, &r.Down, down)
}

// Requests returns the requests received.
func (r *Router) Requests() []*routerv1.ProcessTaskRequest {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]*routerv1.ProcessTaskRequest(nil), r.requests...)
}

// SeenBaggage returns the job ids seen in baggage.
func (r *Router) SeenBaggage() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]string(nil), r.baggage...)
}

// ProcessTask implements the handler.
func (r *Router) ProcessTask(ctx context.Context, req *routerv1.ProcessTaskRequest) (*routerv1.ProcessTaskResponse, error) {
	r.mu.Lock()
	r.requests = append(r.requests, proto.CloneOf(req))
	r.baggage = append(r.baggage, jobid.FromContext(ctx))
	down, propose, over := r.Down, r.Propose, r.OverLimit
	r.mu.Unlock()
	if down {
		return nil, connect.NewError(connect.CodeUnavailable, errors.New("router unavailable"))
	}
	text := strings.TrimSpace(req.GetText())
	dec := &commonv1.RouteDecision{Route: commonv1.Route_ROUTE_CHAT, Source: commonv1.DecisionSource_DECISION_SOURCE_FALLBACK, Confidence: 1}
	switch {
	case strings.HasPrefix(text, "/plan"):
		dec = &commonv1.RouteDecision{Route: commonv1.Route_ROUTE_PLAN, Source: commonv1.DecisionSource_DECISION_SOURCE_COMMAND, Confidence: 1, Matched: "/plan"}
	case strings.HasPrefix(text, "/analyze"):
		// The worker's answer was unusable: a decision and nothing else.
		dec = &commonv1.RouteDecision{Route: commonv1.Route_ROUTE_ANALYZE, Source: commonv1.DecisionSource_DECISION_SOURCE_COMMAND, Confidence: 1, Matched: "/analyze"}
	case strings.HasPrefix(text, "/research"):
		dec = &commonv1.RouteDecision{Route: commonv1.Route_ROUTE_RESEARCH, Source: commonv1.DecisionSource_DECISION_SOURCE_COMMAND, Confidence: 1, Matched: "/research"}
	case strings.HasPrefix(text, "/ops"):
		dec = &commonv1.RouteDecision{Route: commonv1.Route_ROUTE_OPS, Source: commonv1.DecisionSource_DECISION_SOURCE_COMMAND, Confidence: 1, Matched: "/ops"}
	case strings.HasPrefix(text, "/deliberate"):
		dec = &commonv1.RouteDecision{Route: commonv1.Route_ROUTE_CODE, Source: commonv1.DecisionSource_DECISION_SOURCE_COMMAND, Confidence: 1, Matched: "/deliberate"}
	case strings.HasPrefix(text, "/code") || strings.HasPrefix(text, "/order") || strings.Contains(text, "```"):
		dec = &commonv1.RouteDecision{Route: commonv1.Route_ROUTE_CODE, Source: commonv1.DecisionSource_DECISION_SOURCE_RULE, Confidence: 0.9, Evidence: []string{"code"}}
	}
	res := &routerv1.ProcessTaskResponse{Decision: dec, InitialRoute: dec.GetRoute(), FinalRoute: dec.GetRoute()}
	switch dec.GetRoute() {
	case commonv1.Route_ROUTE_CODE:
		if req.GetLocalOnly() {
			res.Refusal = "CODE is refused under local_only; send /cloud"
			return res, nil
		}
		patch, task := propose(text)
		mk := func(order string) *commonv1.ProposalResult {
			return &commonv1.ProposalResult{Order: order, Proposal: &commonv1.Proposal{JobId: req.GetJobId(), Plan: "Update docs as asked (" + order + ")",
				Patch: patch, TaskType: task, Order: order, Risk: &commonv1.Risk{Level: commonv1.RiskLevel_RISK_LEVEL_LOW, RollbackPossible: true}}}
		}
		if dec.GetMatched() == "/deliberate" {
			res.Deliberation = true
			res.Proposals = []*commonv1.ProposalResult{mk("order1"), mk("order2"), {Order: "order3", ErrorCode: "timeout", ErrorMessage: "order3: no answer in time: upstream said 504 from api.example.com"}}
			res.Comparison = &routerv1.Comparison{Summary: "both touch the same file", Recommended: 2}
		} else if over != nil && req.GetConfirmedTokens() < over.GetEstimatedTokens() {
			res.Proposals = []*commonv1.ProposalResult{{Order: "order2", ErrorCode: "cost_over_limit",
				ErrorMessage: "the estimated cost is over the limit", Estimate: over}}
		} else {
			res.Proposals = []*commonv1.ProposalResult{mk("order2")}
		}
	case commonv1.Route_ROUTE_RESEARCH:
		res.StopReason, res.ErrorReason, res.WorkerCalls = routerv1.StopReason_STOP_REASON_WORKER_FAILURE, "model_unavailable:missing:worker-v1:latest", 1
	case commonv1.Route_ROUTE_PLAN, commonv1.Route_ROUTE_OPS:
		res.WorkerOutputs = []*commonv1.WorkerOutput{{Result: "1. 下書き 2. レビュー 3. 公開", Confidence: 0.9, Risk: commonv1.RiskLevel_RISK_LEVEL_LOW}}
		res.QuestionsForUser = []string{"締め切りはいつですか？"}
		res.StopReason = routerv1.StopReason_STOP_REASON_NEED_USER_CONFIRMATION
		res.WorkerCalls = 1
	}
	return res, nil
}

// Heartbeat serves the aggregated report.
type Heartbeat struct {
	heartbeatv1connect.UnimplementedHeartbeatServiceHandler

	mu   sync.Mutex
	down bool
}

// SetDown makes Report fail with Unavailable.
func (h *Heartbeat) SetDown(down bool) {
	set(&h.mu, &h.down, down)
}

// Report implements the handler.
func (h *Heartbeat) Report(_ context.Context, _ *heartbeatv1.ReportRequest) (*heartbeatv1.ReportResponse, error) {
	h.mu.Lock()
	down := h.down
	h.mu.Unlock()
	if down {
		return nil, connect.NewError(connect.CodeUnavailable, errors.New("heartbeat unavailable"))
	}
	text := "chat-mio: idle / router-shiro: busy (job_20260101_001)"
	return &heartbeatv1.ReportResponse{Text: text, GeneratedAt: timestamppb.Now(),
		Agents: []*heartbeatv1.AgentStatus{{State: heartbeatv1.AgentState_AGENT_STATE_IDLE}}}, nil
}

// Gateway records pushed messages, delivering each retry key once.
type Gateway struct {
	gatewayv1connect.UnimplementedNotificationServiceHandler
	Pushed chan *gatewayv1.PushRequest

	mu   sync.Mutex
	seen map[string]bool
}

// NewGateway returns a gateway with a buffered push channel.
func NewGateway() *Gateway {
	return &Gateway{Pushed: make(chan *gatewayv1.PushRequest, 16), seen: map[string]bool{}}
}

// Push implements the handler.
func (g *Gateway) Push(_ context.Context, req *gatewayv1.PushRequest) (*gatewayv1.PushResponse, error) {
	g.mu.Lock()
	dup := g.seen[req.GetRetryKey()]
	g.seen[req.GetRetryKey()] = true
	g.mu.Unlock()
	if dup {
		return &gatewayv1.PushResponse{}, nil
	}
	g.Pushed <- proto.CloneOf(req)
	return &gatewayv1.PushResponse{Delivered: int32(len(req.GetMessages()))}, nil
}

// set stores v in *dst under mu: the fakes' setters change what later calls see.
func set[T any](mu *sync.Mutex, dst *T, v T) {
	mu.Lock()
	defer mu.Unlock()
	*dst = v
}
