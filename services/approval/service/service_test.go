package service_test

import (
	"context"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"syscall"
	"testing"
	"time"

	"connectrpc.com/connect"
	"github.com/jackc/pgx/v5"
	"google.golang.org/protobuf/types/known/durationpb"

	approvalv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/approval/v1"
	"github.com/picoclaw-suite/picoclaw/gen/picoclaw/approval/v1/approvalv1connect"
	commonv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/common/v1"
	"github.com/picoclaw-suite/picoclaw/pkg/config"
	"github.com/picoclaw-suite/picoclaw/pkg/runner"
	"github.com/picoclaw-suite/picoclaw/pkg/svcauth"
	"github.com/picoclaw-suite/picoclaw/pkg/testinfra"
	"github.com/picoclaw-suite/picoclaw/services/approval/service"
)

const childEnv = "PICOCLAW_APPROVAL_TEST_CHILD"

const testAuditKey = "approval-test-audit-key-0123456789abcdef"

// TestMain lets the test binary act as the approval binary in a child process, so restarts are
// real process restarts.
func TestMain(m *testing.M) {
	if os.Getenv(childEnv) == "1" {
		os.Exit(runner.Main("approval", os.Args[1:], os.Stderr, func(ctx context.Context, path string, args []string) error {
			cfg := service.DefaultConfig()
			if err := config.Load(path, &cfg); err != nil {
				return err
			}
			if len(args) == 1 && args[0] == "migrate" {
				return service.Migrate(ctx, cfg)
			}
			return service.Run(ctx, cfg)
		}))
	}
	os.Exit(m.Run())
}

type child struct {
	cmd     *exec.Cmd
	addr    string
	pubAddr string
}

func childCmd(t *testing.T, env []string, args ...string) *exec.Cmd {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), append(append([]string{childEnv + "=1"}, testinfra.AuthEnv(svcauth.Approval)...), env...)...)
	return cmd
}

func start(t *testing.T, env []string) *child {
	t.Helper()
	addrs, err := testinfra.FreeAddrs(2)
	if err != nil {
		t.Fatal(err)
	}
	addr, pubAddr := addrs[0], addrs[1]
	cmd := childCmd(t, append(env, "PICOCLAW_SERVICES_APPROVAL_LISTEN="+addr, "PICOCLAW_SERVICES_APPROVAL_PUBLIC_LISTEN="+pubAddr))
	cmd.Stderr = os.Stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	c := &child{cmd: cmd, addr: addr, pubAddr: pubAddr}
	t.Cleanup(func() { c.stop(t) })
	testinfra.WaitReady(t, "http://"+addr, 30*time.Second)
	return c
}

func (c *child) stop(t *testing.T) {
	if c.cmd.ProcessState != nil {
		return
	}
	_ = c.cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan error, 1)
	go func() { done <- c.cmd.Wait() }()
	select {
	case err := <-done:
		if err != nil {
			t.Errorf("approval exited with %v", err)
		}
	case <-time.After(15 * time.Second):
		_ = c.cmd.Process.Kill()
		<-done
		t.Error("approval did not stop on SIGTERM")
	}
}

func (c *child) client(t *testing.T) approvalv1connect.ApprovalServiceClient {
	return approvalv1connect.NewApprovalServiceClient(http.DefaultClient, "http://"+c.addr, testinfra.AsSuite(t, svcauth.Approval))
}

func TestRestartKeepsPendingJobs(t *testing.T) {
	pg := testinfra.Postgres(t)
	_, runtimeDSN := testinfra.PostgresRole(t, pg)
	rdb := testinfra.Redis(t)
	// Migrations run as the owner; the service runs as a role that cannot change the log.
	env := []string{"PICOCLAW_POSTGRES_MIGRATE_DSN=" + pg.DSN, "PICOCLAW_POSTGRES_DSN=" + runtimeDSN, "PICOCLAW_AUDIT_KEY=" + testAuditKey, "PICOCLAW_REDIS_ADDR=" + rdb.Addr, "PICOCLAW_REDIS_KEY_PREFIX=" + rdb.Prefix,
		"PICOCLAW_APPROVAL_APPROVERS_LINE=Uowner", "PICOCLAW_LOG_LEVEL=warn", "PICOCLAW_APPROVAL_STORE=postgres"}

	// migrate applies the schema and exits.
	if out, err := childCmd(t, env, "migrate").CombinedOutput(); err != nil {
		t.Fatalf("migrate: %v\n%s", err, out)
	}
	ctx := context.Background()
	conn, err := pgx.Connect(ctx, pg.DSN)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var applied int
	if err := conn.QueryRow(ctx, `SELECT count(*) FROM approval_schema_migrations`).Scan(&applied); err != nil || applied == 0 {
		t.Fatalf("migrations applied: %d, %v", applied, err)
	}

	first := start(t, env)
	c := first.client(t)
	owner := &commonv1.Actor{Id: "Uowner", Channel: "line"}
	for i := 1; i <= 3; i++ {
		_, err := c.RequestApproval(ctx, &approvalv1.RequestApprovalRequest{Proposal: &commonv1.Proposal{
			JobId: fmt.Sprintf("job_20260301_%03d", i), Plan: "edit docs",
			Patch: fmt.Sprintf(`[{"type":"file_edit","action":"update","target":"docs/%d.md","content":"x"}]`, i)}})
		if err != nil {
			t.Fatal(err)
		}
	}
	if _, err := c.Approve(ctx, &approvalv1.ApproveRequest{JobId: "job_20260301_001", Actor: owner}); err != nil {
		t.Fatal(err)
	}
	first.stop(t)

	second := start(t, env)
	c = second.client(t)
	list, err := c.ListJobs(ctx, &approvalv1.ListJobsRequest{Statuses: []approvalv1.JobStatus{approvalv1.JobStatus_JOB_STATUS_PENDING}})
	if err != nil || len(list.GetJobs()) != 2 {
		t.Fatalf("pending after restart: %v, %v", list, err)
	}
	for i := 1; i <= 3; i++ {
		evs, err := c.ListJobEvents(ctx, &approvalv1.ListJobEventsRequest{JobId: fmt.Sprintf("job_20260301_%03d", i)})
		if err != nil || !evs.GetChainValid() {
			t.Fatalf("events of job %d: %v, %v", i, evs, err)
		}
	}
	if _, err := c.Approve(ctx, &approvalv1.ApproveRequest{JobId: "job_20260301_002", Actor: owner}); err != nil {
		t.Fatalf("approve after restart: %v", err)
	}
	claim, err := c.ClaimJob(ctx, &approvalv1.ClaimJobRequest{JobId: "job_20260301_001", ExecutorId: "executor-1"})
	if err != nil || !strings.Contains(claim.GetPatch(), "docs/1.md") {
		t.Fatalf("claim after restart: %v, %v", claim, err)
	}
	var ce *connect.Error
	if _, err := c.ClaimJob(ctx, &approvalv1.ClaimJobRequest{JobId: "job_20260301_001", ExecutorId: "executor-1"}); !errAs(err, &ce) || ce.Code() != connect.CodeAborted {
		t.Errorf("second claim after restart = %v", err)
	}
	// Metrics: outcomes of this process and the pending jobs in the database.
	mresp, err := http.Get("http://" + second.addr + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	mbody, _ := io.ReadAll(mresp.Body)
	mresp.Body.Close()
	for _, want := range []string{`picoclaw_approval_results_total{kind="granted"} 1`, `picoclaw_approval_results_total{kind="claimed"} 1`,
		`picoclaw_approval_results_total{kind="claim_rejected"} 1`, "picoclaw_approval_pending_jobs 1"} {
		if !strings.Contains(string(mbody), want) {
			t.Errorf("metrics lack %q", want)
		}
	}
	// The REST API is served by the same process.
	resp, err := http.Get("http://" + second.pubAddr + "/v1/openapi.json")
	if err != nil || resp.StatusCode != http.StatusOK {
		t.Fatalf("openapi: %v %v", resp, err)
	}
	resp.Body.Close()
	resp, err = http.Get("http://" + second.pubAddr + "/v1/nothing")
	if err != nil {
		t.Fatal(err)
	}
	nb, _ := io.ReadAll(resp.Body)
	resp.Body.Close()
	if resp.StatusCode != http.StatusNotFound || !strings.Contains(string(nb), `"code":"not_found"`) {
		t.Errorf("unknown route: %d %s", resp.StatusCode, nb)
	}
}

// On the embedded SQLite state engine approval uses no Redis (nothing listens at redis.addr),
// and Auto-Approve switched on stays on, switched off stays off, when the process is killed
// with SIGKILL right after the call returned.
func TestAutoApproveOnSQLiteStateSurvivesSIGKILL(t *testing.T) {
	dir := t.TempDir()
	env := []string{"PICOCLAW_APPROVAL_STORE=sqlite", "PICOCLAW_APPROVAL_SQLITE_PATH=" + dir + "/audit.db",
		"PICOCLAW_STATE_ENGINE=sqlite", "PICOCLAW_STATE_PATH=" + dir + "/state.db", "PICOCLAW_REDIS_ADDR=127.0.0.1:1",
		"PICOCLAW_AUDIT_KEY=" + testAuditKey, "PICOCLAW_APPROVAL_APPROVERS_LINE=Uowner",
		"PICOCLAW_APPROVAL_AUTO_APPROVE_ENABLED=true", "PICOCLAW_LOG_LEVEL=warn"}
	ctx := context.Background()
	owner := &commonv1.Actor{Id: "Uowner", Channel: "line"}
	kill := func(c *child) {
		_ = c.cmd.Process.Kill()
		_ = c.cmd.Wait()
	}
	request := func(c approvalv1connect.ApprovalServiceClient, id string) approvalv1.JobStatus {
		res, err := c.RequestApproval(ctx, &approvalv1.RequestApprovalRequest{Proposal: &commonv1.Proposal{JobId: id, Plan: "edit docs",
			Patch: `[{"type":"file_edit","action":"update","target":"docs/a.md","content":"x"}]`}})
		if err != nil {
			t.Fatal(err)
		}
		return res.GetJob().GetStatus()
	}

	first := start(t, env)
	if _, err := first.client(t).SetAutoApprove(ctx, &approvalv1.SetAutoApproveRequest{Actor: owner,
		Ttl: durationpb.New(time.Hour), PathPrefixes: []string{"docs/"}}); err != nil {
		t.Fatal(err)
	}
	kill(first)

	second := start(t, env)
	c := second.client(t)
	if got, err := c.GetAutoApprove(ctx, &approvalv1.GetAutoApproveRequest{}); err != nil || !got.GetGrant().GetActive() {
		t.Fatalf("Auto-Approve after the crash: %v, %v; want on", got, err)
	}
	if st := request(c, "job_20260301_001"); st != approvalv1.JobStatus_JOB_STATUS_AUTO_APPROVED {
		t.Fatalf("docs patch under the grant: %s", st)
	}
	if _, err := c.DisableAutoApprove(ctx, &approvalv1.DisableAutoApproveRequest{Actor: owner, Reason: "done"}); err != nil {
		t.Fatal(err)
	}
	kill(second)

	c = start(t, env).client(t)
	if got, err := c.GetAutoApprove(ctx, &approvalv1.GetAutoApproveRequest{}); err != nil || got.GetGrant().GetActive() {
		t.Fatalf("Auto-Approve after the crash: %v, %v; want off", got, err)
	}
	if st := request(c, "job_20260301_002"); st != approvalv1.JobStatus_JOB_STATUS_PENDING {
		t.Fatalf("docs patch with Auto-Approve off: %s", st)
	}
}

func errAs(err error, ce **connect.Error) bool {
	if err == nil {
		return false
	}
	e, ok := err.(*connect.Error)
	*ce = e
	return ok
}

func TestValidateNamesKeys(t *testing.T) {
	cfg := service.DefaultConfig()
	cfg.Approval.PendingTTL = 0
	cfg.Approval.Store = "mysql"
	cfg.Approval.AutoApprove.DefaultTTL = 48 * time.Hour
	cfg.Approval.HardDeny.Commands = []string{"("}
	err := cfg.Validate()
	for _, key := range []string{"approval.pending_ttl", "approval.store", "approval.auto_approve.default_ttl", "approval.hard_deny.commands[0]"} {
		if err == nil || !strings.Contains(err.Error(), key) {
			t.Errorf("error %v does not name %s", err, key)
		}
	}
	cfg = service.DefaultConfig()
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "postgres.dsn") {
		t.Errorf("missing DSN: %v", err)
	}
	cfg.Approval.Store = service.StoreSQLite
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "approval.audit.key") || !strings.Contains(err.Error(), "PICOCLAW_AUDIT_KEY") {
		t.Errorf("missing audit key: %v", err)
	}
	cfg.Approval.Audit.Key = "too-short"
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "approval.audit.key") {
		t.Errorf("short audit key: %v", err)
	}
	cfg.Approval.Audit.Key = testAuditKey
	if err := cfg.Validate(); err != nil {
		t.Errorf("sqlite defaults: %v", err)
	}
	t.Setenv("PICOCLAW_APPROVAL_TOKENS", "ops:short")
	cfg = service.DefaultConfig()
	cfg.Approval.Store = service.StoreSQLite
	if err := config.ApplyEnv(&cfg, os.LookupEnv); err != nil {
		t.Fatal(err)
	}
	if err := cfg.Validate(); err == nil || !strings.Contains(err.Error(), "approval.approvers.tokens") || strings.Contains(err.Error(), "short") {
		t.Errorf("bad tokens: %v", err)
	}
}

// The sweeper of a running service expires pending jobs after approval.pending_ttl; this one
// runs on the embedded SQLite store.
func TestSweeperExpiresPendingJobs(t *testing.T) {
	rdb := testinfra.Redis(t)
	env := []string{"PICOCLAW_APPROVAL_STORE=sqlite", "PICOCLAW_APPROVAL_SQLITE_PATH=" + t.TempDir() + "/audit.db", "PICOCLAW_AUDIT_KEY=" + testAuditKey,
		"PICOCLAW_REDIS_ADDR=" + rdb.Addr, "PICOCLAW_REDIS_KEY_PREFIX=" + rdb.Prefix, "PICOCLAW_LOG_LEVEL=warn",
		"PICOCLAW_APPROVAL_PENDING_TTL=1s", "PICOCLAW_APPROVAL_SWEEP_INTERVAL=100ms"}
	c := start(t, env).client(t)
	ctx := context.Background()
	if _, err := c.RequestApproval(ctx, &approvalv1.RequestApprovalRequest{Proposal: &commonv1.Proposal{
		JobId: "job_20260301_001", Patch: `[{"type":"shell_command","action":"run","target":"make"}]`}}); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(10 * time.Second)
	for {
		res, err := c.GetJob(ctx, &approvalv1.GetJobRequest{JobId: "job_20260301_001"})
		if err != nil {
			t.Fatal(err)
		}
		if res.GetJob().GetStatus() == approvalv1.JobStatus_JOB_STATUS_EXPIRED {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("job not expired: %v", res.GetJob().GetStatus())
		}
		time.Sleep(100 * time.Millisecond)
	}
	evs, err := c.ListJobEvents(ctx, &approvalv1.ListJobEventsRequest{JobId: "job_20260301_001"})
	if err != nil || !evs.GetChainValid() || evs.GetEvents()[1].GetType() != "expired" || evs.GetEvents()[1].GetPolicyRule() != "pending_ttl" {
		t.Fatalf("events: %v, %v", evs, err)
	}
}
