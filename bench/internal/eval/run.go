package eval

import (
	"context"
	"crypto/rand"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"time"

	"connectrpc.com/connect"

	approvalv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/approval/v1"
	"github.com/picoclaw-suite/picoclaw/gen/picoclaw/approval/v1/approvalv1connect"
	coderv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/coder/v1"
	"github.com/picoclaw-suite/picoclaw/gen/picoclaw/coder/v1/coderv1connect"
	commonv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/common/v1"
	executorv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/executor/v1"
	"github.com/picoclaw-suite/picoclaw/gen/picoclaw/executor/v1/executorv1connect"
	"github.com/picoclaw-suite/picoclaw/pkg/llm"
	"github.com/picoclaw-suite/picoclaw/pkg/svcauth"
	"github.com/picoclaw-suite/picoclaw/pkg/testinfra"

	"github.com/picoclaw-suite/picoclaw/bench/internal/suite"
)

// Services are the binaries each task runs: coder-order reads the workspace through the
// executor's view, approval records and approves, the executor applies.
var Services = []string{"approval", "executor", "coder-order"}

// The order every provider is configured as, and the people of the flow.
const (
	order = "order1"
	// maxTokens caps each answer of the coder.
	maxTokens = 8000
)

var (
	requester = &commonv1.Actor{Id: "eval", Channel: "cli"}
	approver  = &commonv1.Actor{Id: suite.Approver, Channel: "cli"}
)

// Options configure a run.
type Options struct {
	// Root is the repository (the services' working directory); BinDir holds the built binaries.
	Root, BinDir string
	Iso          *suite.Isolation
	// Fixture is the repository every task starts from.
	Fixture   string
	Tasks     []Task
	Providers []Provider
	// WorkDir receives each task's workspace and service logs, <WorkDir>/<provider>/<task>/.
	WorkDir string
	// CallTimeout bounds each model call (the order's timeout_sec; default 120 s).
	CallTimeout time.Duration
	// OllamaNumCtx is an Ollama order's context length (default 16384).
	OllamaNumCtx int
	// Env is added to every service's environment.
	Env []string
	// Logf reports progress (default: nothing).
	Logf func(format string, args ...any)
}

// Run runs every task for every provider that is not skipped and reports the outcome. Model
// failures are results; an error of the harness itself (a service that does not start, a
// workspace that cannot be made) is recorded on the task and counted, and the run goes on.
func Run(ctx context.Context, o Options) *Report {
	if o.CallTimeout <= 0 {
		o.CallTimeout = 120 * time.Second
	}
	if o.OllamaNumCtx <= 0 {
		o.OllamaNumCtx = 16384
	}
	if o.Logf == nil {
		o.Logf = func(string, ...any) {}
	}
	rep := &Report{StartedAt: time.Now().UTC()}
	for _, t := range o.Tasks {
		rep.Tasks = append(rep.Tasks, TaskInfo{ID: t.ID, Kind: t.Kind, Title: t.Title, Expect: t.Expect})
	}
	for _, p := range o.Providers {
		pr := ProviderReport{Provider: p}
		if p.Skip == "" {
			for _, t := range o.Tasks {
				if ctx.Err() != nil {
					break
				}
				o.Logf("%s (%s): %s", p.Name, p.Model, t.ID)
				r := o.runTask(ctx, p, t)
				o.Logf("%s: %s %s", t.ID, r.Status, r.Error)
				pr.Results = append(pr.Results, r)
			}
		}
		pr.Summary = summarize(pr.Results)
		rep.Providers = append(rep.Providers, pr)
	}
	rep.DurationSec = time.Since(rep.StartedAt).Round(time.Second).Seconds()
	return rep
}

// runTask runs one task for one provider on a fresh workspace and fresh services.
func (o Options) runTask(ctx context.Context, p Provider, t Task) TaskResult {
	r := TaskResult{Task: t.ID, Kind: t.Kind, Expect: t.Expect, JobID: newJobID()}
	dir := filepath.Join(o.WorkDir, p.Name, t.ID)
	r.Dir = dir
	fail := func(err error) TaskResult {
		r.Status, r.Error = StatusHarnessError, err.Error()
		return r
	}
	ws, logs := filepath.Join(dir, "workspace"), filepath.Join(dir, "logs")
	if err := os.RemoveAll(dir); err != nil {
		return fail(err)
	}
	if err := os.MkdirAll(logs, 0o755); err != nil {
		return fail(err)
	}
	if err := Prepare(ctx, o.Fixture, t, ws); err != nil {
		return fail(err)
	}
	cfg := filepath.Join(dir, "picoclaw.yaml")
	if err := o.writeConfig(cfg, p); err != nil {
		return fail(err)
	}
	env := append([]string{"PICOCLAW_CONFIG=" + cfg}, o.Env...)
	if p.KeyEnv != "" {
		env = append(env, p.KeyEnv+"="+p.Key)
	}
	ollama := llm.DefaultOllamaURL
	if p.Name == llm.ProviderOllama {
		ollama = p.BaseURL
	}
	s, err := suite.Start(ctx, suite.Options{Root: o.Root, BinDir: o.BinDir, LogDir: logs, Iso: o.Iso,
		Services: Services, Workspace: ws, Ollama: ollama, Env: env})
	if err != nil {
		return fail(fmt.Errorf("start services: %w", err))
	}
	defer func() {
		if err := s.Stop(); err != nil {
			o.Logf("stop services of %s: %v", t.ID, err)
		}
	}()
	c, err := newClients(s)
	if err != nil {
		return fail(err)
	}
	if err := c.run(ctx, t, ws, &r); err != nil {
		return fail(err)
	}
	return r
}

// writeConfig writes the suite configuration of a run with p as order1 and the other orders
// off (JSON, which is YAML), in English.
func (o Options) writeConfig(path string, p Provider) error {
	ord := map[string]any{"alias": "Eval", "enabled": true, "provider": p.Name, "model": p.Model,
		"max_tokens": maxTokens, "timeout_sec": int(o.CallTimeout.Seconds()), "retry_max": 2}
	if p.BaseURL != "" {
		ord["base_url"] = p.BaseURL
	}
	if p.Name == llm.ProviderOllama {
		ord["num_ctx"], ord["max_context"] = o.OllamaNumCtx, o.OllamaNumCtx
	}
	orders := map[string]any{"default": order, order: ord,
		"order2": map[string]any{"enabled": false}, "order3": map[string]any{"enabled": false}}
	if p.Price != nil {
		orders["prices"] = map[string]any{p.Model: map[string]float64{
			"input_per_mtok": p.Price.InputPerMTok, "output_per_mtok": p.Price.OutputPerMTok}}
	}
	// No heartbeat service runs: the services do not beat.
	data, err := json.MarshalIndent(map[string]any{"locale": "en", "orders": orders,
		"heartbeat": map[string]any{"enabled": false}}, "", "  ")
	if err != nil {
		return err
	}
	return os.WriteFile(path, data, 0o600)
}

// clients call the services as the suite does: coder-order as router-shiro, approval as
// chat-mio speaking for a verified person, the executor as chat-mio.
type clients struct {
	coder    coderv1connect.CoderServiceClient
	approval approvalv1connect.ApprovalServiceClient
	executor executorv1connect.ExecutorServiceClient
}

func newClients(s *suite.Suite) (clients, error) {
	var c clients
	opts := map[string]connect.ClientOption{}
	for _, target := range []string{svcauth.CoderOrder, svcauth.Approval, svcauth.Executor} {
		opt, err := testinfra.SuiteCaller(target)
		if err != nil {
			return c, err
		}
		opts[target] = opt
	}
	hc := &http.Client{}
	c.coder = coderv1connect.NewCoderServiceClient(hc, s.Procs["coder-order"].URL(), opts[svcauth.CoderOrder])
	c.approval = approvalv1connect.NewApprovalServiceClient(hc, s.Procs["approval"].URL(), opts[svcauth.Approval])
	c.executor = executorv1connect.NewExecutorServiceClient(hc, s.Procs["executor"].URL(), opts[svcauth.Executor])
	return c, nil
}

// Bounds of the steps after the proposal; the proposal itself is bounded by coder-order
// (timeout per attempt, retries, one repair) and its server's write timeout.
const (
	proposeTimeout = 15 * time.Minute
	approveTimeout = 30 * time.Second
	executeTimeout = 10 * time.Minute
)

// run takes the task through the flow of one job: proposal, approval request, approval,
// execution, checks. It fills r and returns only harness errors.
func (c clients) run(ctx context.Context, t Task, ws string, r *TaskResult) error {
	pctx, cancel := context.WithTimeout(ctx, proposeTimeout)
	start := time.Now()
	res, err := c.coder.Propose(pctx, &coderv1.ProposeRequest{JobId: r.JobID, Order: order, Task: t.Prompt,
		Route: commonv1.Route_ROUTE_CODE1, Locale: "en"})
	cancel()
	r.LatencyMS = float64(time.Since(start).Microseconds()) / 1000
	if err != nil {
		if ctx.Err() != nil {
			return err
		}
		r.Status, r.Error, r.ErrorCode = StatusProposalFailed, err.Error(), proposalErrorCode(err)
		return nil
	}
	p := res.GetProposal()
	r.Proposed = true
	r.Plan, r.Patch = p.GetPlan(), p.GetPatch()
	r.InputTokens, r.OutputTokens = p.GetUsage().GetInputTokens(), p.GetUsage().GetOutputTokens()
	r.CostUSD, r.ModelLatencyMS = p.GetCostHint().GetEstimatedCostUsd(), p.GetLatencyMs()
	r.Answer = strings.TrimSpace(p.GetPatch()) == ""

	actx, cancel := context.WithTimeout(ctx, approveTimeout)
	defer cancel()
	req := &approvalv1.RequestApprovalRequest{Proposal: p, SessionId: "cli:eval", Channel: "cli", RequestedBy: requester,
		Route: commonv1.Route_ROUTE_CODE1, Locale: "en", AnswerOnly: r.Answer}
	switch {
	case r.Answer:
		// As chat-mio does: the answer is delivered and recorded as answered.
		ar, err := c.approval.RequestApproval(actx, req)
		if err != nil {
			return fmt.Errorf("record the answer: %w", err)
		}
		r.Outcome = outcomeName(ar.GetOutcome())
		r.Checks = CheckAnswerText(t, r.Plan)
		if t.Expect != ExpectAnswer {
			r.Status = StatusNoPatch
			return nil
		}
		r.setVerdict()
		return nil
	case t.Expect == ExpectAnswer:
		// A change where only an answer was asked for is not executed.
		r.Status = StatusUnexpectedPatch
		return nil
	}
	ar, err := c.approval.RequestApproval(actx, req)
	if err != nil {
		// Approval refuses a patch it cannot parse as invalid: that is the coder's failure.
		if connect.CodeOf(err) == connect.CodeInvalidArgument {
			r.Status, r.Error = StatusRefused, err.Error()
			return nil
		}
		return fmt.Errorf("request approval: %w", err)
	}
	r.Outcome = outcomeName(ar.GetOutcome())
	switch ar.GetOutcome() {
	case approvalv1.Outcome_OUTCOME_PENDING:
		if _, err := c.approval.Approve(actx, &approvalv1.ApproveRequest{JobId: r.JobID, Actor: approver, Locale: "en"}); err != nil {
			return fmt.Errorf("approve: %w", err)
		}
	case approvalv1.Outcome_OUTCOME_AUTO_APPROVED:
	default:
		r.Status, r.Error = StatusRefused, strings.TrimSpace(ar.GetPolicyRule()+": "+ar.GetReason())
		return nil
	}
	ectx, cancel := context.WithTimeout(ctx, executeTimeout)
	defer cancel()
	er, err := c.executor.Execute(ectx, &executorv1.ExecuteRequest{JobId: r.JobID, Locale: "en"})
	if err != nil {
		if connect.CodeOf(err) == connect.CodeAborted {
			// The executor refuses a job whose base does not match the workspace (a base the
			// coder stated wrongly): nothing was written.
			r.Status, r.Error = StatusNotApplied, err.Error()
			return nil
		}
		return fmt.Errorf("execute: %w", err)
	}
	er1 := er.GetResult()
	r.Applied = er1.GetSuccess() && er1.GetFailed() == 0
	r.Execution = executionText(er1)
	if !r.Applied {
		r.Status = StatusNotApplied
		return nil
	}
	r.Checks, err = CheckWorkspace(ctx, ws, t)
	if err != nil {
		return fmt.Errorf("check the workspace: %w", err)
	}
	r.setVerdict()
	return nil
}

// setVerdict decides a checked task's status.
func (r *TaskResult) setVerdict() {
	r.Status, r.Solved = StatusSolved, true
	for _, c := range r.Checks {
		if c.OK {
			continue
		}
		r.Solved = false
		if c.Name == CheckGoTest {
			r.Status = StatusTestsFailed
			return
		}
		r.Status = StatusChecksFailed
	}
}

func outcomeName(o approvalv1.Outcome) string {
	return strings.ToLower(strings.TrimPrefix(o.String(), "OUTCOME_"))
}

// executionText counts the failed operations and gives the first failure.
func executionText(r *commonv1.ExecutionResult) string {
	text := fmt.Sprintf("%d of %d operations failed", r.GetFailed(), r.GetExecuted())
	if r.GetRolledBack() {
		text += ", rolled back"
	}
	for _, c := range r.GetCommands() {
		if !c.GetSuccess() && !c.GetSkipped() {
			text += fmt.Sprintf("; #%d %s %s %s: %s", c.GetIndex(), c.GetType(), c.GetAction(), c.GetTarget(), tail(c.GetError(), 300))
			break
		}
	}
	return text
}

// proposalErrorCode is coder-order's stable error code from the error's detail.
func proposalErrorCode(err error) string {
	var cerr *connect.Error
	if !errors.As(err, &cerr) {
		return ""
	}
	for _, d := range cerr.Details() {
		if v, derr := d.Value(); derr == nil {
			if pr, ok := v.(*commonv1.ProposalResult); ok {
				return pr.GetErrorCode()
			}
		}
	}
	return cerr.Code().String()
}

func newJobID() string {
	var b [4]byte
	_, _ = rand.Read(b[:])
	return fmt.Sprintf("job_%s_%08x", time.Now().Format("20060102"), binary.BigEndian.Uint32(b[:]))
}
