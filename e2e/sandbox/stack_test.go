// Package sandbox_test runs hostile approved commands through the real executor binary, with
// the real approval service, and checks that each one stays inside its sandbox.
package sandbox_test

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"net/http/httptest"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"syscall"
	"testing"
	"time"

	approvalv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/approval/v1"
	"github.com/picoclaw-suite/picoclaw/gen/picoclaw/approval/v1/approvalv1connect"
	commonv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/common/v1"
	executorv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/executor/v1"
	"github.com/picoclaw-suite/picoclaw/gen/picoclaw/executor/v1/executorv1connect"
	"github.com/picoclaw-suite/picoclaw/pkg/rpcserver"
	"github.com/picoclaw-suite/picoclaw/pkg/svcauth"
	"github.com/picoclaw-suite/picoclaw/pkg/testinfra"
)

// binDir holds the approval and executor binaries TestMain built.
var binDir string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "picoclaw-sandbox-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := 1
	// The unprivileged user started below must be able to run the executor binary.
	if err := os.Chmod(dir, 0o755); err != nil {
		fmt.Fprintln(os.Stderr, err)
	} else if out, err := exec.Command("go", "build", "-ldflags=-s -w", "-o", dir+"/",
		"../../services/approval/cmd/approval", "../../services/executor/cmd/executor").CombinedOutput(); err != nil {
		fmt.Fprintf(os.Stderr, "go build: %v\n%s", err, out)
	} else {
		binDir = dir
		code = m.Run()
	}
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

// canary values: secrets the executor holds that no command may ever print.
const (
	canaryAuditKey = "canary-audit-key-7f3a9c1e5b-0123456789abcdef"
	canaryAPIKey   = "sk-canary-openai-2b8d4f6a0c"
	canaryState    = "canary-state-file-91e7d3b5a2"
	canaryCreds    = "canary-credentials-file-4c6e8a0b2d"
	canaryConfig   = "canary-config-file-5d7f9b1c3e"
)

func canaries() []string {
	// The executor's own service key is the credential a hostile command would want most.
	return []string{testinfra.TestServiceKey(svcauth.Executor), testinfra.TestServiceKey(svcauth.Approval), canaryAuditKey, canaryAPIKey, canaryState, canaryCreds, canaryConfig}
}

// runAs is the identity the executor runs with: the test's own, or a system user.
type runAs struct {
	name     string
	uid, gid int
	cred     *syscall.Credential
}

// stack is one approval service and one executor, both real binaries.
type stack struct {
	t         *testing.T
	as        runAs
	base      string
	ws        string
	stateDir  string
	home      string
	cfgPath   string
	approval  approvalv1connect.ApprovalServiceClient
	executor  executorv1connect.ExecutorServiceClient
	addrs     map[string]string
	execPid   int
	execLogs  *testinfra.SyncBuffer
	httpAddr  string
	httpHits  *atomic.Int64
	redisAddr string
	pgAddr    string
	seq       atomic.Int64
	day       string
}

// mkdir makes dir with mode and hands it to the executor's user.
func (s *stack) mkdir(dir string, mode os.FileMode) {
	s.t.Helper()
	if err := os.MkdirAll(dir, mode); err != nil {
		s.t.Fatal(err)
	}
	if err := os.Chmod(dir, mode); err != nil {
		s.t.Fatal(err)
	}
	if err := os.Chown(dir, s.as.uid, s.as.gid); err != nil {
		s.t.Fatal(err)
	}
}

func (s *stack) writeFile(path, content string, mode os.FileMode) {
	s.t.Helper()
	if err := os.WriteFile(path, []byte(content), mode); err != nil {
		s.t.Fatal(err)
	}
	if err := os.Chown(path, s.as.uid, s.as.gid); err != nil {
		s.t.Fatal(err)
	}
}

func startStack(t *testing.T, as runAs, day string) *stack {
	t.Helper()
	base, err := os.MkdirTemp("", "picoclaw-sandbox-")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = os.RemoveAll(base) })
	s := &stack{t: t, as: as, base: base, day: day, httpHits: &atomic.Int64{}, addrs: map[string]string{}}
	if err := os.Chmod(base, 0o755); err != nil {
		t.Fatal(err)
	}
	s.ws = filepath.Join(base, "ws")
	s.stateDir = filepath.Join(base, "state")
	s.home = filepath.Join(base, "home")
	s.mkdir(s.ws, 0o755)
	s.mkdir(s.stateDir, 0o700)
	s.mkdir(filepath.Join(s.home, ".picoclaw"), 0o700)
	s.writeFile(filepath.Join(s.stateDir, "session.db"), canaryState+"\n", 0o600)
	s.writeFile(filepath.Join(s.home, ".picoclaw", "credentials"), "token="+canaryCreds+"\n", 0o600)
	s.cfgPath = filepath.Join(s.stateDir, "picoclaw.yaml")
	s.writeFile(s.cfgPath, "# "+canaryConfig+"\nlog_level: info\n", 0o600)
	s.writeFile(filepath.Join(base, "outside.txt"), "outside\n", 0o644)

	// A local HTTP server that counts every request a command manages to make.
	srv := httptest.NewUnstartedServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		s.httpHits.Add(1)
		_, _ = w.Write([]byte("reached-the-host-server"))
	}))
	ln, err := net.Listen("tcp", "0.0.0.0:0")
	if err != nil {
		t.Fatal(err)
	}
	srv.Listener = ln
	srv.Start()
	t.Cleanup(srv.Close)
	s.httpAddr = ln.Addr().String()

	rd := testinfra.Redis(t)
	pg := testinfra.Postgres(t)
	s.redisAddr = rd.Addr
	s.pgAddr = pgHostPort(pg.DSN)

	free, err := testinfra.FreeAddrs(3)
	if err != nil {
		t.Fatal(err)
	}
	s.addrs["approval"], s.addrs["executor"], s.addrs["approval-public"] = free[0], free[1], free[2]
	common := []string{
		"PATH=" + os.Getenv("PATH"),
		"PICOCLAW_SERVICES_APPROVAL_LISTEN=" + s.addrs["approval"],
		"PICOCLAW_SERVICES_APPROVAL_PUBLIC_LISTEN=" + s.addrs["approval-public"],
		"PICOCLAW_SERVICES_APPROVAL_URL=http://" + s.addrs["approval"],
		"PICOCLAW_SERVICES_EXECUTOR_LISTEN=" + s.addrs["executor"],
		"PICOCLAW_SERVICES_EXECUTOR_URL=http://" + s.addrs["executor"],
		"PICOCLAW_HEARTBEAT_ENABLED=false",
		"PICOCLAW_REDIS_ADDR=" + rd.Addr,
		"PICOCLAW_REDIS_KEY_PREFIX=" + rd.Prefix,
		"PICOCLAW_LOG_LEVEL=info",
	}
	approvalEnv := append(append(append([]string(nil), common...), testinfra.AuthEnv(svcauth.Approval)...),
		"PICOCLAW_AUDIT_KEY="+canaryAuditKey,
		"PICOCLAW_APPROVAL_STORE=sqlite",
		"PICOCLAW_APPROVAL_SQLITE_PATH="+filepath.Join(t.TempDir(), "audit.db"),
		"PICOCLAW_APPROVAL_APPROVERS_CLI=tester",
		"HOME="+t.TempDir(),
	)
	s.startProcess("approval", approvalEnv, nil)
	// The executor's journal lives beside the workspace, owned by the executor's user as well.
	s.mkdir(s.ws+"-executor-state", 0o700)
	executorEnv := append(append(append([]string(nil), common...), testinfra.AuthEnv(svcauth.Executor)...),
		"HOME="+s.home,
		"PICOCLAW_CONFIG="+s.cfgPath,
		"OPENAI_API_KEY="+canaryAPIKey,
		"PICOCLAW_EXECUTOR_WORKSPACE="+s.ws,
		"PICOCLAW_EXECUTOR_STATE_DIR="+s.ws+"-executor-state",
		"PICOCLAW_EXECUTOR_COMMAND_TIMEOUT=20s",
		"PICOCLAW_EXECUTOR_GIT_TIMEOUT=20s",
		"PICOCLAW_EXECUTOR_ENV_ALLOWLIST=PATH,HOME,LANG",
		"PICOCLAW_EXECUTOR_SANDBOX_LIMITS_FILE_SIZE_BYTES=16777216",
		"PICOCLAW_EXECUTOR_SANDBOX_LIMITS_PROCESSES=128",
		"LANG=C.UTF-8",
	)
	s.execLogs = s.startProcess("executor", executorEnv, as.cred)

	hc := rpcserver.NewHTTPClient()
	t.Cleanup(hc.CloseIdleConnections)
	s.approval = approvalv1connect.NewApprovalServiceClient(hc, "http://"+s.addrs["approval"], testinfra.AsSuite(t, svcauth.Approval))
	s.executor = executorv1connect.NewExecutorServiceClient(hc, "http://"+s.addrs["executor"], testinfra.AsSuite(t, svcauth.Executor))
	return s
}

func pgHostPort(dsn string) string {
	// postgres://user@host:port/db?...
	rest := dsn[strings.Index(dsn, "://")+3:]
	if i := strings.IndexByte(rest, '@'); i >= 0 {
		rest = rest[i+1:]
	}
	if i := strings.IndexAny(rest, "/?"); i >= 0 {
		rest = rest[:i]
	}
	if !strings.Contains(rest, ":") {
		rest += ":5432"
	}
	return rest
}

// startProcess starts a binary and waits for /healthz.
func (s *stack) startProcess(name string, env []string, cred *syscall.Credential) *testinfra.SyncBuffer {
	t := s.t
	t.Helper()
	cmd := exec.Command(filepath.Join(binDir, name))
	cmd.Env = env
	cmd.Dir = s.base
	logs := &testinfra.SyncBuffer{}
	cmd.Stdout, cmd.Stderr = logs, logs
	if cred != nil {
		cmd.SysProcAttr = &syscall.SysProcAttr{Credential: cred}
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }()
	t.Cleanup(func() {
		_ = cmd.Process.Signal(syscall.SIGTERM)
		select {
		case <-done:
		case <-time.After(15 * time.Second):
			_ = cmd.Process.Kill()
			<-done
		}
		if t.Failed() {
			out := logs.String()
			if len(out) > 20000 {
				out = "…" + out[len(out)-20000:]
			}
			t.Logf("--- %s log ---\n%s", name, out)
		}
	})
	if name == "executor" {
		s.execPid = cmd.Process.Pid
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	for {
		select {
		case <-done:
			t.Fatalf("%s exited at start:\n%s", name, logs)
		default:
		}
		res, err := http.Get("http://" + s.addrs[name] + "/healthz")
		if err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return logs
			}
		}
		select {
		case <-ctx.Done():
			t.Fatalf("%s not healthy: %v\n%s", name, err, logs)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// submit has the patch approved by an approver and executed; it returns the executor's
// answer, or nil with the refusal when approval refused the job outright.
func (s *stack) submit(patch string) (*executorv1.ExecuteResponse, string) {
	t := s.t
	t.Helper()
	ctx := context.Background()
	id := fmt.Sprintf("job_%s_%04d", s.day, s.seq.Add(1))
	req, err := s.approval.RequestApproval(ctx, &approvalv1.RequestApprovalRequest{
		Proposal:    &commonv1.Proposal{JobId: id, Plan: "hostile command test", Patch: patch},
		Channel:     "cli",
		RequestedBy: &commonv1.Actor{Id: "requester", Channel: "cli"},
	})
	if err != nil {
		t.Fatalf("request approval: %v", err)
	}
	switch req.GetOutcome() {
	case approvalv1.Outcome_OUTCOME_REFUSED:
		return nil, req.GetReason()
	case approvalv1.Outcome_OUTCOME_PENDING:
		if _, err := s.approval.Approve(ctx, &approvalv1.ApproveRequest{JobId: id, Actor: &commonv1.Actor{Id: "tester", Channel: "cli"}}); err != nil {
			t.Fatalf("approve: %v", err)
		}
	}
	res, err := s.executor.Execute(ctx, &executorv1.ExecuteRequest{JobId: id, Locale: "en"})
	if err != nil {
		t.Fatalf("execute %s: %v", id, err)
	}
	return res, ""
}

// leftover lists host processes whose working directory is in the workspace, or whose command
// line is one of marks: anything a command started that is still running.
func (s *stack) leftover(marks ...string) []string {
	ents, err := os.ReadDir("/proc")
	if err != nil {
		s.t.Fatal(err)
	}
	var out []string
	for _, e := range ents {
		if _, err := strconv.Atoi(e.Name()); err != nil {
			continue
		}
		stat, err := os.ReadFile("/proc/" + e.Name() + "/stat")
		if err != nil {
			continue
		}
		if i := strings.LastIndex(string(stat), ") "); i > 0 && i+2 < len(stat) && (stat[i+2] == 'Z' || stat[i+2] == 'X') {
			continue
		}
		cmdline, _ := os.ReadFile("/proc/" + e.Name() + "/cmdline")
		cl := strings.ReplaceAll(strings.TrimRight(string(cmdline), "\x00"), "\x00", " ")
		cwd, _ := os.Readlink("/proc/" + e.Name() + "/cwd")
		if cwd == s.ws || strings.HasPrefix(cwd, s.ws+"/") {
			out = append(out, e.Name()+" "+cl)
			continue
		}
		for _, m := range marks {
			if m != "" && strings.Contains(cl, m) {
				out = append(out, e.Name()+" "+cl)
			}
		}
	}
	return out
}

// users is the executor as the test's own user, and as an unprivileged system user when the
// test runs as root (as CI does).
func users(t *testing.T) []runAs {
	t.Helper()
	self := runAs{name: "self", uid: os.Getuid(), gid: os.Getgid()}
	if os.Getuid() != 0 {
		self.name = "unprivileged"
		return []runAs{self}
	}
	self.name = "root"
	const name = "picoclaw-sbx"
	u, err := user.Lookup(name)
	if err != nil {
		if out, err := exec.Command("useradd", "--system", "--no-create-home", "--shell", "/usr/sbin/nologin", name).CombinedOutput(); err != nil {
			t.Fatalf("useradd %s (needed to run the suite unprivileged): %v %s", name, err, out)
		}
		if u, err = user.Lookup(name); err != nil {
			t.Fatal(err)
		}
	}
	uid, _ := strconv.Atoi(u.Uid)
	gid, _ := strconv.Atoi(u.Gid)
	return []runAs{self, {name: "unprivileged", uid: uid, gid: gid,
		cred: &syscall.Credential{Uid: uint32(uid), Gid: uint32(gid), NoSetGroups: true}}}
}
