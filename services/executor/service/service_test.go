package service

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/http/httputil"
	"net/url"
	"strconv"

	"google.golang.org/protobuf/proto"

	"encoding/json"
	"errors"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"reflect"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	commonv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/common/v1"
	"github.com/picoclaw-suite/picoclaw/pkg/fault"
	"github.com/picoclaw-suite/picoclaw/pkg/svcauth"
	"github.com/picoclaw-suite/picoclaw/pkg/testinfra"

	"connectrpc.com/connect"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	approvalv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/approval/v1"
	executorv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/executor/v1"
	"github.com/picoclaw-suite/picoclaw/gen/picoclaw/executor/v1/executorv1connect"
	"github.com/picoclaw-suite/picoclaw/pkg/config"
	"github.com/picoclaw-suite/picoclaw/pkg/rpcserver"
	"github.com/picoclaw-suite/picoclaw/pkg/testinfra/fakemcp"
	"github.com/picoclaw-suite/picoclaw/services/approval/approvaltest"
)

type suite struct {
	appr   *approvaltest.Server
	ws     string
	client executorv1connect.ExecutorServiceClient
	grpc   executorv1connect.ExecutorServiceClient
	logs   *testinfra.SyncBuffer
	// baseURL is the executor's internal listener.
	baseURL string
}

// start runs the executor service against the real approval service; the owner may approve.
func start(t testing.TB, mutate func(*Config), approval ...approvaltest.Option) *suite {
	t.Helper()
	return startTampered(t, mutate, nil, approval...)
}

// startTampered is start with tamper changing every claim's answer on its way from approval to
// the executor (what a compromised store or network could do).
func startTampered(t testing.TB, mutate func(*Config), tamper func(*approvalv1.ClaimJobResponse), approval ...approvaltest.Option) *suite {
	t.Helper()
	appr := approvaltest.Start(t, append([]approvaltest.Option{approvaltest.WithApprovers("line", owner.GetId()), approvaltest.WithAutoApprove()}, approval...)...)
	dir := t.TempDir()
	ws := filepath.Join(dir, "ws")
	if err := os.Mkdir(ws, 0o755); err != nil {
		t.Fatal(err)
	}
	return startOn(t, appr, ws, filepath.Join(dir, "state"), mutate, tamper)
}

// startOn runs an executor on workspace ws and state directory state against appr: several
// executors started on the same ones are replicas.
func startOn(t testing.TB, appr *approvaltest.Server, ws, state string, mutate func(*Config), tamper func(*approvalv1.ClaimJobResponse)) *suite {
	t.Helper()
	ln := testinfra.Listen(t)
	cfg := DefaultConfig()
	cfg.Auth = testinfra.Auth(Name)
	cfg.Listener = ln
	cfg.Services.Approval.URL = appr.URL
	if tamper != nil {
		cfg.Services.Approval.URL = tamperingProxy(t, appr.URL, tamper)
	}
	cfg.Executor.Workspace, cfg.Executor.StateDir = ws, state
	// Generous: every command starts a sandbox, which a loaded machine or the race detector
	// makes slow to start; no test here waits for these to expire.
	cfg.Executor.CommandTimeout = 20 * time.Second
	cfg.Executor.GitTimeout = 20 * time.Second
	cfg.Executor.MCP.Timeout = time.Second
	cfg.HeartbeatSender.Enabled = false
	logs := &testinfra.SyncBuffer{}
	cfg.LogWriter = logs
	if mutate != nil {
		mutate(&cfg)
	}
	url := testinfra.URL(ln)
	testinfra.Serve(t, Name, url+"/readyz", func(ctx context.Context) error { return Run(ctx, cfg) })
	hc := rpcserver.NewHTTPClient()
	// Runs before the server stops, so shutdown does not wait for idle client connections.
	t.Cleanup(hc.CloseIdleConnections)
	return &suite{
		appr:    appr,
		ws:      cfg.Executor.Workspace,
		client:  executorv1connect.NewExecutorServiceClient(hc, url, testinfra.AsSuite(t, svcauth.Executor)),
		grpc:    executorv1connect.NewExecutorServiceClient(hc, url, connect.WithGRPC(), testinfra.AsSuite(t, svcauth.Executor)),
		logs:    logs,
		baseURL: url,
	}
}

// tamperingProxy forwards to approval and rewrites successful ClaimJob answers.
func tamperingProxy(t testing.TB, target string, tamper func(*approvalv1.ClaimJobResponse)) string {
	t.Helper()
	u, err := url.Parse(target)
	if err != nil {
		t.Fatal(err)
	}
	rp := httputil.NewSingleHostReverseProxy(u)
	direct := rp.Director
	rp.Director = func(r *http.Request) {
		direct(r)
		// Uncompressed answers, so they can be rewritten.
		r.Header.Del("Accept-Encoding")
		r.Header.Del("Connect-Accept-Encoding")
	}
	rp.ModifyResponse = func(res *http.Response) error {
		if !strings.HasSuffix(res.Request.URL.Path, "/ClaimJob") || res.StatusCode != http.StatusOK {
			return nil
		}
		body, err := io.ReadAll(res.Body)
		res.Body.Close()
		if err != nil {
			return err
		}
		var claim approvalv1.ClaimJobResponse
		if err := proto.Unmarshal(body, &claim); err != nil {
			return err
		}
		tamper(&claim)
		if body, err = proto.Marshal(&claim); err != nil {
			return err
		}
		res.Body = io.NopCloser(bytes.NewReader(body))
		res.ContentLength = int64(len(body))
		res.Header.Set("Content-Length", strconv.Itoa(len(body)))
		return nil
	}
	// The executor's client speaks h2c.
	return testinfra.H2CServer(t, rp).URL
}

var owner = &commonv1.Actor{Id: "Uowner", Channel: "line"}

// addJob brings a job with patch text into status through approval's own API.
func (s *suite) addJob(t *testing.T, id, text string, status approvalv1.JobStatus) {
	t.Helper()
	ctx, c := context.Background(), s.appr.Client
	res, err := c.RequestApproval(ctx, &approvalv1.RequestApprovalRequest{Proposal: &commonv1.Proposal{JobId: id, Plan: "test " + id, Patch: text},
		SessionId: "line:Uowner", Channel: "line", RequestedBy: owner, Route: commonv1.Route_ROUTE_CODE})
	if err != nil {
		t.Fatalf("request %s: %v", id, err)
	}
	switch status {
	case approvalv1.JobStatus_JOB_STATUS_PENDING, approvalv1.JobStatus_JOB_STATUS_REFUSED:
	case approvalv1.JobStatus_JOB_STATUS_DENIED:
		_, err = c.Deny(ctx, &approvalv1.DenyRequest{JobId: id, Actor: owner})
	case approvalv1.JobStatus_JOB_STATUS_CANCELLED:
		_, err = c.Cancel(ctx, &approvalv1.CancelRequest{JobId: id, Actor: owner})
	case approvalv1.JobStatus_JOB_STATUS_GRANTED:
		_, err = c.Approve(ctx, &approvalv1.ApproveRequest{JobId: id, Actor: owner})
	case approvalv1.JobStatus_JOB_STATUS_COMPLETED:
		if _, err = c.Approve(ctx, &approvalv1.ApproveRequest{JobId: id, Actor: owner}); err == nil {
			var claim *approvalv1.ClaimJobResponse
			if claim, err = c.ClaimJob(ctx, &approvalv1.ClaimJobRequest{JobId: id, ExecutorId: "executor-elsewhere"}); err == nil {
				_, err = c.ReportExecution(ctx, &approvalv1.ReportExecutionRequest{JobId: id, ExecutorId: "executor-elsewhere",
					LeaseToken: claim.GetLeaseToken(), Event: approvalv1.ExecutionEvent_EXECUTION_EVENT_COMPLETED,
					Result: &commonv1.ExecutionResult{Success: true}})
			}
		}
	case approvalv1.JobStatus_JOB_STATUS_EXPIRED:
		// approval expires it on its own (the suite's pending TTL is short).
		deadline := time.Now().Add(10 * time.Second)
		for s.job(t, id).GetStatus() != status && time.Now().Before(deadline) {
			time.Sleep(20 * time.Millisecond)
		}
	default:
		t.Fatalf("addJob: status %v", status)
	}
	if err != nil {
		t.Fatalf("job %s to %v: %v", id, status, err)
	}
	if got := s.job(t, id).GetStatus(); got != status {
		t.Fatalf("job %s is %v, want %v (outcome %v)", id, got, status, res.GetOutcome())
	}
}

func (s *suite) job(t *testing.T, id string) *approvalv1.Job {
	t.Helper()
	res, err := s.appr.Client.GetJob(context.Background(), &approvalv1.GetJobRequest{JobId: id})
	if err != nil {
		t.Fatalf("get %s: %v", id, err)
	}
	return res.GetJob()
}

// events are a job's audit events; approval must find the chain intact.
func (s *suite) events(t *testing.T, id string) []*approvalv1.JobEvent {
	t.Helper()
	res, err := s.appr.Client.ListJobEvents(context.Background(), &approvalv1.ListJobEventsRequest{JobId: id})
	if err != nil {
		t.Fatalf("events %s: %v", id, err)
	}
	if !res.GetChainValid() {
		t.Fatalf("audit chain of %s does not verify", id)
	}
	return res.GetEvents()
}

// executorEvents are the types of the events from the claim on.
func (s *suite) executorEvents(t *testing.T, id string) []string {
	t.Helper()
	var out []string
	for _, e := range s.events(t, id) {
		if e.GetActor().GetChannel() == "executor" || strings.HasPrefix(e.GetType(), "execution_") || e.GetType() == "claimed" ||
			e.GetType() == "claim_rejected" || e.GetType() == "hash_mismatch" {
			out = append(out, e.GetType())
		}
	}
	return out
}

func jsonPatch(t *testing.T, cmds ...map[string]any) string {
	t.Helper()
	b, err := json.Marshal(cmds)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func cmd(typ, action, target, content string) map[string]any {
	return map[string]any{"type": typ, "action": action, "target": target, "content": content}
}

func eventTypes(evs []*approvalv1.JobEvent) []string {
	var out []string
	for _, e := range evs {
		out = append(out, e.GetType())
	}
	return out
}

func codeOf(err error) connect.Code {
	var ce *connect.Error
	if errors.As(err, &ce) {
		return ce.Code()
	}
	return connect.CodeUnknown
}

// userText is what a refusal tells the user (its google.rpc.LocalizedMessage), "" when nothing.
func userText(err error) string {
	text, _ := fault.Text(rpcserver.FromConnect(err), "")
	return text
}

func TestExecuteRunsAnApprovedJobExactlyOnce(t *testing.T) {
	s := start(t, nil)
	text := "```bash\necho run >> runs.log\n```\n\n```txt:notes/hello.txt\nこんにちは\n```\n"
	s.addJob(t, "job_20260101_001", text, approvalv1.JobStatus_JOB_STATUS_GRANTED)

	const callers = 8
	var wg sync.WaitGroup
	results := make(chan error, callers)
	var ok *executorv1.ExecuteResponse
	var mu sync.Mutex
	for i := 0; i < callers; i++ {
		wg.Add(1)
		go func(i int) {
			defer wg.Done()
			c := s.client
			if i%2 == 1 {
				c = s.grpc
			}
			res, err := c.Execute(context.Background(), &executorv1.ExecuteRequest{JobId: " JOB_20260101_001 "})
			if err == nil {
				mu.Lock()
				ok = res
				mu.Unlock()
			}
			results <- err
		}(i)
	}
	wg.Wait()
	close(results)
	succeeded := 0
	for err := range results {
		switch {
		case err == nil:
			succeeded++
		case codeOf(err) != connect.CodeFailedPrecondition:
			t.Errorf("refusal code = %v (%v)", codeOf(err), err)
		}
	}
	if claims := countOf(eventTypes(s.events(t, "job_20260101_001")), "claimed"); succeeded != 1 || claims != 1 {
		t.Fatalf("succeeded %d, claims %d", succeeded, claims)
	}
	if got := readFile(t, filepath.Join(s.ws, "runs.log")); got != "run\n" {
		t.Fatalf("runs.log = %q", got)
	}
	if got := readFile(t, filepath.Join(s.ws, "notes/hello.txt")); got != "こんにちは\n" {
		t.Fatalf("hello.txt = %q", got)
	}
	r := ok.GetResult()
	if !r.GetSuccess() || r.GetExecuted() != 2 || r.GetSucceeded() != 2 || len(r.GetCommands()) != 2 {
		t.Fatalf("result = %v", r)
	}
	if !strings.Contains(ok.GetResultText(), "実行: 2 件, 成功: 2 件, 失敗: 0 件") || !strings.Contains(ok.GetResultText(), "✓ [1] shell_command run") {
		t.Fatalf("text = %s", ok.GetResultText())
	}
	types := s.executorEvents(t, "job_20260101_001")
	if !slices.Contains(types, "claimed") || !slices.Contains(types, "execution_completed") {
		t.Fatalf("events = %v", types)
	}
	if countOf(types, "claim_rejected") != callers-1 {
		t.Fatalf("refusals not audited: %v", types)
	}
	if j := s.job(t, "job_20260101_001"); j.GetStatus() != approvalv1.JobStatus_JOB_STATUS_COMPLETED || !j.GetResult().GetSuccess() ||
		j.GetResult().GetExecuted() != 2 {
		t.Fatalf("job = %v %v", j.GetStatus(), j.GetResult())
	}
}

func countOf(s []string, v string) int {
	n := 0
	for _, x := range s {
		if x == v {
			n++
		}
	}
	return n
}

func readFile(t *testing.T, p string) string {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

func TestRefusedJobsAreAuditedAndNothingRuns(t *testing.T) {
	s := start(t, nil)
	text := "```bash\ntouch ran.txt\n```\n"
	tests := []struct {
		id     string
		status approvalv1.JobStatus
		code   connect.Code
		reason string
	}{
		{"job_20260101_011", approvalv1.JobStatus_JOB_STATUS_PENDING, connect.CodeFailedPrecondition, "pending"},
		{"job_20260101_012", approvalv1.JobStatus_JOB_STATUS_DENIED, connect.CodeFailedPrecondition, "denied"},
		{"job_20260101_013", approvalv1.JobStatus_JOB_STATUS_EXPIRED, connect.CodeFailedPrecondition, "expired"},
		{"job_20260101_014", approvalv1.JobStatus_JOB_STATUS_COMPLETED, connect.CodeFailedPrecondition, "already claimed"},
		{"job_20260101_015", approvalv1.JobStatus_JOB_STATUS_CANCELLED, connect.CodeFailedPrecondition, "cancelled"},
		{"job_20260101_016", approvalv1.JobStatus_JOB_STATUS_REFUSED, connect.CodeFailedPrecondition, "refused"},
		{"job_20260101_017", 0, connect.CodeNotFound, "not found"},
	}
	// Expiry needs approval's pending TTL short, so that job lives in an approval of its own.
	expiring := start(t, nil, approvaltest.WithPendingTTL(50*time.Millisecond, 20*time.Millisecond))
	for _, tt := range tests {
		t.Run(tt.id, func(t *testing.T) {
			s := s
			text := text
			switch tt.status {
			case approvalv1.JobStatus_JOB_STATUS_EXPIRED:
				s = expiring
			case approvalv1.JobStatus_JOB_STATUS_REFUSED:
				text = "```bash\ntouch ran.txt; rm -rf /\n```\n"
			}
			if tt.status != 0 {
				s.addJob(t, tt.id, text, tt.status)
			}
			_, err := s.client.Execute(context.Background(), &executorv1.ExecuteRequest{JobId: tt.id})
			if codeOf(err) != tt.code || !strings.Contains(err.Error(), tt.reason) {
				t.Fatalf("err = %v, want %v mentioning %q", err, tt.code, tt.reason)
			}
			if tt.status == 0 {
				return // approval keeps no log of a job it never had
			}
			if types := s.executorEvents(t, tt.id); !slices.Contains(types, "claim_rejected") {
				t.Fatalf("events = %v", types)
			}
		})
	}
	if _, err := os.Stat(filepath.Join(s.ws, "ran.txt")); err == nil {
		t.Fatal("a refused job ran")
	}
	if _, err := s.client.Execute(context.Background(), &executorv1.ExecuteRequest{JobId: "rm -rf /"}); codeOf(err) != connect.CodeInvalidArgument {
		t.Fatalf("malformed id: %v", err)
	}
}

func TestHashMismatchIsRefusedAndReported(t *testing.T) {
	approved := "```bash\necho approved > out.txt\n```\n"
	tampered := "```bash\necho tampered > out.txt\n```\n"
	s := startTampered(t, nil, func(c *approvalv1.ClaimJobResponse) { c.Patch = tampered })
	var err error
	s.addJob(t, "job_20260101_021", approved, approvalv1.JobStatus_JOB_STATUS_GRANTED)
	_, err = s.client.Execute(context.Background(), &executorv1.ExecuteRequest{JobId: "job_20260101_021"})
	if codeOf(err) != connect.CodeDataLoss || !strings.Contains(err.Error(), "hash mismatch") {
		t.Fatalf("err = %v", err)
	}
	if _, err := os.Stat(filepath.Join(s.ws, "out.txt")); err == nil {
		t.Fatal("tampered content ran")
	}
	types := s.executorEvents(t, "job_20260101_021")
	if !slices.Equal(types, []string{"claimed", "hash_mismatch"}) {
		t.Fatalf("events = %v", types)
	}
	if st := s.job(t, "job_20260101_021").GetStatus(); st != approvalv1.JobStatus_JOB_STATUS_FAILED {
		t.Fatalf("status = %v", st)
	}
}

func browserPatch(t *testing.T) string {
	return jsonPatch(t,
		cmd("browser", "chrome_navigate", "https://example.test/", ""),
		cmd("browser", "chrome_click", "#more", ""),
		cmd("browser", "chrome_fill_or_select", "#q", "tea"),
		cmd("browser", "chrome_get_text", "h1", ""),
		cmd("browser", "chrome_screenshot", "", ""),
	)
}

func startBridge(t *testing.T) *fakemcp.Server {
	t.Helper()
	b, err := fakemcp.Start(fakemcp.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(b.Close)
	return b
}

func TestBrowserOperationsThroughMCP(t *testing.T) {
	bridge := startBridge(t)
	bridge.Handle("chrome_get_web_content", func(map[string]any) *mcp.CallToolResult { return fakemcp.Text("Example Domain") })
	artifacts := t.TempDir()
	s := start(t, func(c *Config) {
		c.Executor.MCP.ChromeBridgeURL = bridge.URL()
		c.Executor.Browser.ArtifactsDir = artifacts
	})
	s.addJob(t, "job_20260101_031", browserPatch(t), approvalv1.JobStatus_JOB_STATUS_GRANTED)
	res, err := s.client.Execute(context.Background(), &executorv1.ExecuteRequest{JobId: "job_20260101_031", Locale: "en"})
	if err != nil {
		t.Fatal(err)
	}
	r := res.GetResult()
	if !r.GetSuccess() || r.GetSucceeded() != 5 {
		t.Fatalf("result = %v", r)
	}
	shot := filepath.Join(artifacts, "job_20260101_031", "004-screenshot.png")
	sum := sha256.Sum256(bridge.PNG)
	outs := []string{`{"message":"chrome_navigate done","success":true}`, `{"message":"chrome_click_element done","success":true}`,
		`{"message":"chrome_fill_or_select done","success":true}`, "Example Domain",
		fmt.Sprintf("screenshot saved: %s (image/png, %d bytes, sha256 %s)", shot, len(bridge.PNG), hex.EncodeToString(sum[:]))}
	for i, want := range outs {
		if got := r.GetCommands()[i].GetOutput(); got != want {
			t.Errorf("command %d output = %q, want %q", i, got, want)
		}
	}
	if b, err := os.ReadFile(shot); err != nil || !bytes.Equal(b, bridge.PNG) {
		t.Fatalf("kept screenshot: %v", err)
	}
	// The screenshot also comes back for the user to see, naming where it is kept.
	if imgs := res.GetImages(); len(imgs) != 1 || imgs[0].GetContentType() != "image/png" || !bytes.Equal(imgs[0].GetData(), bridge.PNG) ||
		imgs[0].GetArtifact() != shot {
		t.Fatalf("images = %v", imgs)
	}
	var tools []string
	for _, c := range bridge.Calls() {
		if c.Invalid != "" {
			t.Errorf("%s: %s", c.Tool, c.Invalid)
		}
		tools = append(tools, c.Tool)
	}
	if want := []string{"chrome_navigate", "chrome_click_element", "chrome_fill_or_select", "chrome_get_web_content", "chrome_screenshot"}; !slices.Equal(tools, want) {
		t.Fatalf("calls = %q", tools)
	}
	if args := bridge.Calls()[4].Args; args["storeBase64"] != true || args["savePng"] != false {
		t.Fatalf("screenshot args = %v", args)
	}
	if !strings.Contains(res.GetResultText(), "Executed: 5, succeeded: 5, failed: 0") {
		t.Fatalf("text = %s", res.GetResultText())
	}
}

// A browser action the bridge has no tool for is invalid at approval, not unavailable later.
func TestUnknownBrowserActionIsRefusedAsInvalid(t *testing.T) {
	s := start(t, nil)
	_, err := s.client.DryRun(context.Background(), &executorv1.DryRunRequest{
		Patch: `[{"type":"browser","action":"chrome_execute_script","content":"return document.title"}]`})
	if codeOf(err) != connect.CodeInvalidArgument || !strings.Contains(err.Error(), "chrome_execute_script") {
		t.Fatalf("err = %v", err)
	}
}

func TestBrowserToolErrorFailsTheCommand(t *testing.T) {
	bridge := startBridge(t)
	bridge.Handle("chrome_click_element", func(args map[string]any) *mcp.CallToolResult {
		return fakemcp.Error(fmt.Sprintf("Element not found: %v", args["selector"]))
	})
	s := start(t, func(c *Config) { c.Executor.MCP.ChromeBridgeURL = bridge.URL() })
	s.addJob(t, "job_20260101_032", jsonPatch(t,
		cmd("browser", "chrome_navigate", "https://example.test/", ""),
		cmd("browser", "chrome_click", "#missing", "")), approvalv1.JobStatus_JOB_STATUS_GRANTED)
	res, err := s.client.Execute(context.Background(), &executorv1.ExecuteRequest{JobId: "job_20260101_032"})
	if err != nil {
		t.Fatal(err)
	}
	if c := res.GetResult().GetCommands()[1]; c.GetSuccess() || !strings.Contains(c.GetError(), "chrome_click_element: Element not found: #missing") {
		t.Fatalf("click = %v", c)
	}
}

func TestBrowserJobUnderAutoApproveIsRefused(t *testing.T) {
	bridge := startBridge(t)
	// Approval never auto-approves a browser job; the claim says so anyway and hides that the job
	// uses the browser: the executor finds out itself.
	s := startTampered(t, func(c *Config) { c.Executor.MCP.ChromeBridgeURL = bridge.URL() }, func(c *approvalv1.ClaimJobResponse) {
		c.AutoApproved = true
		c.Job.UsesBrowser = false
	})
	text := jsonPatch(t, cmd("browser", "chrome_navigate", "https://example.test/", ""))
	var err error
	s.addJob(t, "job_20260101_033", text, approvalv1.JobStatus_JOB_STATUS_GRANTED)
	_, err = s.client.Execute(context.Background(), &executorv1.ExecuteRequest{JobId: "job_20260101_033", Locale: "en"})
	if codeOf(err) != connect.CodePermissionDenied || !strings.Contains(err.Error(), "auto-approved") {
		t.Fatalf("err = %v", err)
	}
	if calls := bridge.Calls(); len(calls) != 0 {
		t.Fatalf("bridge was called: %v", calls)
	}
	if types := s.executorEvents(t, "job_20260101_033"); !slices.Equal(types, []string{"claimed", "execution_refused"}) {
		t.Fatalf("events = %v", types)
	}
}

func TestUnreachableBridgeFailsClearly(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "http://" + ln.Addr().String() + "/mcp"
	_ = ln.Close()
	s := start(t, func(c *Config) { c.Executor.MCP.ChromeBridgeURL = dead })
	s.addJob(t, "job_20260101_034", jsonPatch(t, cmd("browser", "chrome_get_text", "h1", "")), approvalv1.JobStatus_JOB_STATUS_GRANTED)
	res, err := s.client.Execute(context.Background(), &executorv1.ExecuteRequest{JobId: "job_20260101_034"})
	if err != nil {
		t.Fatal(err)
	}
	r := res.GetResult()
	if r.GetSuccess() || r.GetFailed() != 1 || !strings.Contains(r.GetCommands()[0].GetError(), "unreachable") {
		t.Fatalf("result = %v", r)
	}
	if !strings.Contains(res.GetResultText(), "✗ [1] browser chrome_get_text h1") {
		t.Fatalf("text = %s", res.GetResultText())
	}
	if types := s.executorEvents(t, "job_20260101_034"); !slices.Contains(types, "execution_failed") {
		t.Fatalf("events = %v", types)
	}
}

func TestDryRun(t *testing.T) {
	s := start(t, nil)
	text := "```txt:a.txt\nhello\n```\n\n```bash\ntouch shell.txt\n```\n"
	res, err := s.client.DryRun(context.Background(), &executorv1.DryRunRequest{Patch: text})
	if err != nil {
		t.Fatal(err)
	}
	if r := res.GetResult(); !r.GetDryRun() || !r.GetSuccess() || r.GetSucceeded() != 2 {
		t.Fatalf("result = %v", r)
	}
	if !strings.HasPrefix(res.GetResultText(), "ドライラン") {
		t.Fatalf("text = %s", res.GetResultText())
	}
	entries, _ := os.ReadDir(s.ws)
	if len(entries) != 0 {
		t.Fatalf("dry run wrote %v", entries)
	}
	if _, err := s.client.DryRun(context.Background(), &executorv1.DryRunRequest{Patch: "[{\"type\":\"nope\"}]"}); codeOf(err) != connect.CodeInvalidArgument {
		t.Fatalf("bad patch: %v", err)
	}

	// A dry run of an approved job reads it without claiming it.
	s.addJob(t, "job_20260101_041", text, approvalv1.JobStatus_JOB_STATUS_GRANTED)
	ex, err := s.client.Execute(context.Background(), &executorv1.ExecuteRequest{JobId: "job_20260101_041", DryRun: true})
	if err != nil || !ex.GetResult().GetDryRun() {
		t.Fatalf("dry execute: %v %v", ex, err)
	}
	if st := s.job(t, "job_20260101_041").GetStatus(); st != approvalv1.JobStatus_JOB_STATUS_GRANTED || slices.Contains(eventTypes(s.events(t, "job_20260101_041")), "claimed") {
		t.Fatalf("dry run claimed the job: %v", st)
	}
	if entries, _ := os.ReadDir(s.ws); len(entries) != 0 {
		t.Fatalf("dry run wrote %v", entries)
	}
}

func TestFailedJobIsRolledBackAndReported(t *testing.T) {
	s := start(t, nil)
	if err := os.WriteFile(filepath.Join(s.ws, "a.txt"), []byte("original\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	text := jsonPatch(t,
		cmd("file_edit", "update", "a.txt", "changed\n"),
		cmd("file_edit", "create", "b.txt", "new\n"),
		cmd("shell_command", "run", "exit 3", ""),
	)
	s.addJob(t, "job_20260101_051", text, approvalv1.JobStatus_JOB_STATUS_GRANTED)
	res, err := s.client.Execute(context.Background(), &executorv1.ExecuteRequest{JobId: "job_20260101_051"})
	if err != nil {
		t.Fatal(err)
	}
	r := res.GetResult()
	if r.GetSuccess() || !r.GetRolledBack() || !slices.Equal(r.GetRestoredPaths(), []string{"a.txt", "b.txt"}) {
		t.Fatalf("result = %v", r)
	}
	if got := readFile(t, filepath.Join(s.ws, "a.txt")); got != "original\n" {
		t.Fatalf("a.txt = %q", got)
	}
	evs := s.events(t, "job_20260101_051")
	if last := evs[len(evs)-1]; last.GetType() != "execution_failed" || !s.job(t, "job_20260101_051").GetResult().GetRolledBack() {
		t.Fatalf("last event = %v, job = %v", last, s.job(t, "job_20260101_051"))
	}
	logs := s.logs.String()
	for _, ev := range []string{"worker.patch_execution_start", "worker.command_executed", "worker.command_failed", "worker.patch_execution_complete", "executor.rollback"} {
		if !strings.Contains(logs, `"msg":"`+ev+`"`) {
			t.Errorf("log lacks %s", ev)
		}
	}
	if !strings.Contains(logs, `"job_id":"job_20260101_051"`) {
		t.Error("log lines lack the job id")
	}
}

func TestValidateNamesKeys(t *testing.T) {
	tests := []struct {
		mutate func(*Config)
		key    string
	}{
		{func(c *Config) { c.Executor.Workspace = "" }, "executor.workspace"},
		{func(c *Config) { c.Executor.CommandTimeout = 0 }, "executor.command_timeout"},
		{func(c *Config) { c.Executor.GitTimeout = -time.Second }, "executor.git_timeout"},
		{func(c *Config) { c.Executor.OutputLimitBytes = 0 }, "executor.output_limit_bytes"},
		{func(c *Config) { c.Executor.EnvAllowlist = append(c.Executor.EnvAllowlist, "OPENAI_API_KEY") }, "executor.env_allowlist"},
		{func(c *Config) { c.Executor.EnvAllowlist = []string{"SLACK_BOT_TOKEN"} }, "executor.env_allowlist"},
		{func(c *Config) { c.Executor.MCP.Timeout = 0 }, "executor.mcp.timeout"},
		// The journal must be out of reach of the commands of a job.
		{func(c *Config) { c.Executor.StateDir = "./workspace/.state" }, "executor.state_dir"},
		{func(c *Config) { c.Executor.StateDir = "./workspace" }, "executor.state_dir"},
		{func(c *Config) { c.Executor.StateDir = "" }, "executor.state_dir"},
		{func(c *Config) { c.Executor.TakeoverInterval = 0 }, "executor.takeover_interval"},
	}
	for _, tt := range tests {
		c := DefaultConfig()
		tt.mutate(&c)
		if err := c.Validate(); err == nil || !strings.Contains(err.Error(), tt.key) {
			t.Errorf("Validate() = %v, want it to name %s", err, tt.key)
		}
	}
	c := DefaultConfig()
	if err := c.Validate(); err != nil {
		t.Fatalf("defaults: %v", err)
	}
	if !c.Executor.RollbackOnFailure || c.Executor.StopOnError || c.Executor.CommitMessagePrefix != "[Worker Auto-Commit]" || c.Executor.OutputLimitBytes != 65536 {
		t.Fatalf("defaults = %+v", c.Executor)
	}
}

func TestExampleConfigMatchesDefaults(t *testing.T) {
	cfg := DefaultConfig()
	if err := config.Decode(mustRead(t, "../../../config/picoclaw.example.yaml"), &cfg); err != nil {
		t.Fatal(err)
	}
	if err := cfg.Validate(); err != nil {
		t.Fatal(err)
	}
	def := DefaultConfig()
	if !reflect.DeepEqual(cfg.Executor, def.Executor) || cfg.Approval != def.Approval {
		t.Fatalf("example %+v\ndefault %+v", cfg.Executor, def.Executor)
	}
}

func mustRead(t *testing.T, p string) []byte {
	t.Helper()
	b, err := os.ReadFile(p)
	if err != nil {
		t.Fatal(err)
	}
	return b
}

func TestApprovedDiffWithAutoCommit(t *testing.T) {
	s := start(t, func(c *Config) { c.Executor.AutoCommit = true })
	if err := os.WriteFile(filepath.Join(s.ws, "main.go"), []byte("package main\n\nfunc main() {\n\tprintln(\"old\")\n}\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	git := func(args ...string) string {
		t.Helper()
		c := exec.Command("git", args...)
		c.Dir = s.ws
		out, err := c.CombinedOutput()
		if err != nil {
			t.Fatalf("git %v: %v %s", args, err, out)
		}
		return strings.TrimSpace(string(out))
	}
	git("init", "-q", "-b", "main")
	git("add", "-A")
	git("-c", "user.name=t", "-c", "user.email=t@example.invalid", "commit", "-q", "-m", "init")
	text := "diff --git a/main.go b/main.go\n--- a/main.go\n+++ b/main.go\n@@ -1,5 +1,5 @@\n package main\n \n func main() {\n-\tprintln(\"old\")\n+\tprintln(\"new\")\n }\n"
	s.addJob(t, "job_20260101_061", text, approvalv1.JobStatus_JOB_STATUS_GRANTED)
	res, err := s.client.Execute(context.Background(), &executorv1.ExecuteRequest{JobId: "job_20260101_061"})
	if err != nil {
		t.Fatal(err)
	}
	r := res.GetResult()
	if !r.GetSuccess() || r.GetCommitHash() != git("rev-parse", "HEAD") {
		t.Fatalf("result = %v", r)
	}
	if !strings.Contains(readFile(t, filepath.Join(s.ws, "main.go")), `println("new")`) {
		t.Fatal("diff not applied")
	}
	if subj := git("log", "-1", "--format=%s"); subj != "[Worker Auto-Commit] job_20260101_061" {
		t.Fatalf("subject = %q", subj)
	}
	if !strings.Contains(res.GetResultText(), "Git コミット: "+r.GetCommitHash()) {
		t.Fatalf("text = %s", res.GetResultText())
	}
}

func TestApprovalUnreachable(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	dead := "http://" + ln.Addr().String()
	_ = ln.Close()
	s := start(t, func(c *Config) { c.Services.Approval.URL = dead })
	_, err = s.client.Execute(context.Background(), &executorv1.ExecuteRequest{JobId: "job_20260101_071"})
	if codeOf(err) != connect.CodeUnavailable || !strings.Contains(err.Error(), "unavailable") {
		t.Fatalf("err = %v", err)
	}
}

// The sandbox's mode is logged at start and named in every shell result; mode none is a
// warning.
func TestSandboxModeIsLoggedAndReported(t *testing.T) {
	for _, tc := range []struct {
		mode, event, label string
	}{
		{"namespaces", "executor.sandbox_ready", "namespaces+landlock"},
		{"none", "executor.sandbox_disabled", "none"},
	} {
		t.Run(tc.mode, func(t *testing.T) {
			s := start(t, func(c *Config) { c.Executor.Sandbox.Mode = tc.mode })
			text := "```bash\necho hi\n```\n"
			s.addJob(t, "job_20260101_077", text, approvalv1.JobStatus_JOB_STATUS_GRANTED)
			res, err := s.client.Execute(context.Background(), &executorv1.ExecuteRequest{JobId: "job_20260101_077"})
			if err != nil {
				t.Fatal(err)
			}
			c := res.GetResult().GetCommands()[0]
			if c.GetSandbox() != tc.label || c.GetExitReason() != "exit" || c.GetExitCode() != 0 {
				t.Fatalf("command result = %v", c)
			}
			logs := s.logs.String()
			if !strings.Contains(logs, tc.event) || !strings.Contains(logs, `"sandbox":"`+tc.label+`"`) {
				t.Fatalf("logs lack %s / sandbox %s:\n%s", tc.event, tc.label, logs)
			}
			if tc.mode == "none" && !strings.Contains(logs, `"level":"WARN","msg":"executor.sandbox_disabled"`) {
				t.Fatalf("mode none is not a warning:\n%s", logs)
			}
		})
	}
}
