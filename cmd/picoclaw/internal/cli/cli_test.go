package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"

	approvalv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/approval/v1"
	"github.com/picoclaw-suite/picoclaw/gen/picoclaw/approval/v1/approvalv1connect"
	commonv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/common/v1"
	"github.com/picoclaw-suite/picoclaw/pkg/config"
	"github.com/picoclaw-suite/picoclaw/pkg/rpcserver"
	"github.com/picoclaw-suite/picoclaw/pkg/svcauth"
	"github.com/picoclaw-suite/picoclaw/pkg/testinfra"
	"github.com/picoclaw-suite/picoclaw/services/approval/approvaltest"
	approval "github.com/picoclaw-suite/picoclaw/services/approval/service"
)

const token = "cli-test-token-0123456789-abcdefghijkl"

// startApproval runs the real approval service (SQLite audit store, real Redis) and returns
// its URL.
func startApproval(t *testing.T) (internal, public string) {
	t.Helper()
	rd := testinfra.Redis(t)
	s := approvaltest.Start(t, approvaltest.WithAutoApprove(), approvaltest.WithConfig(func(cfg *approval.Config) {
		cfg.Redis.Addr, cfg.Redis.KeyPrefix = rd.Addr, rd.Prefix
		cfg.Approval.Approvers.Tokens = config.Secret("ops:" + token)
		cfg.Approval.Audit.Key = config.Secret("cli-test-audit-key-0123456789abcdef0123")
	}))
	return s.URL, s.PublicURL
}

func requestApproval(t *testing.T, url, id, target string) {
	t.Helper()
	c := approvalv1connect.NewApprovalServiceClient(rpcserver.NewHTTPClient(), url, testinfra.AsSuite(t, svcauth.Approval))
	_, err := c.RequestApproval(context.Background(), &approvalv1.RequestApprovalRequest{
		SessionId: "cli:tester", Channel: "cli",
		Proposal: &commonv1.Proposal{JobId: id, Plan: "write " + target, TaskType: commonv1.TaskType_TASK_TYPE_DOCS,
			Patch: `[{"type":"file_edit","action":"create","target":"` + target + `","content":"hello"}]`}})
	if err != nil {
		t.Fatal(err)
	}
}

// run executes the CLI with the approval URL and token, returning exit code and output.
func run(t *testing.T, url, tok string, args ...string) (int, string, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	env := map[string]string{"PICOCLAW_TOKEN": tok, "PICOCLAW_SERVICES_APPROVAL_PUBLIC_URL": url}
	code := Main(args, IO{In: strings.NewReader(""), Out: &out, Err: &errOut, Getenv: func(k string) string { return env[k] }})
	return code, out.String(), errOut.String()
}

func TestApprovalCommandsAgainstTheRealService(t *testing.T) {
	internal, url := startApproval(t)
	requestApproval(t, internal, "job_20261121_001", "docs/a.md")
	requestApproval(t, internal, "job_20261121_002", "docs/b.md")

	code, out, errOut := run(t, url, token, "jobs", "--status", "pending")
	if code != ExitOK || !strings.Contains(out, "job_20261121_001") || !strings.Contains(out, "job_20261121_002") {
		t.Fatalf("jobs: %d %s %s", code, out, errOut)
	}
	// The table's header and the jobs' states in the user's language: Japanese unless English is
	// asked for.
	if !strings.HasPrefix(out, "ジョブ  ") || !strings.Contains(out, "状態") || !strings.Contains(out, "承認待ち") {
		t.Fatalf("jobs, header in Japanese by default:\n%s", out)
	}
	if code, out, errOut = run(t, url, token, "--locale", "en", "jobs"); code != ExitOK || !strings.HasPrefix(out, "JOB  ") ||
		!strings.Contains(out, "pending") {
		t.Fatalf("jobs --locale en: %d %s %s", code, out, errOut)
	}
	// --output json: the documented fields (docs/cli.md), parsed.
	code, out, errOut = run(t, url, token, "jobs", "-o", "json")
	var list struct {
		Jobs []map[string]any `json:"jobs"`
	}
	if code != ExitOK || json.Unmarshal([]byte(out), &list) != nil || len(list.Jobs) != 2 {
		t.Fatalf("jobs -o json: %d %s %s", code, out, errOut)
	}
	for _, field := range []string{"job_id", "status", "route", "task_type", "summary", "affected_paths", "flags", "requested_at", "stats"} {
		if _, ok := list.Jobs[0][field]; !ok {
			t.Errorf("jobs -o json lacks %q: %v", field, list.Jobs[0])
		}
	}
	code, out, errOut = run(t, url, token, "deny", "JOB_20261121_002", "--reason", "not now")
	if code != ExitOK || out != "job_20261121_002: 却下済み\n" {
		t.Fatalf("deny: %d %s %s", code, out, errOut)
	}
	code, out, _ = run(t, url, token, "job", "job_20261121_002")
	if code != ExitOK || !strings.HasPrefix(out, "job_20261121_002  却下済み  ") || !strings.Contains(out, "却下の理由: not now") ||
		!strings.Contains(out, "ハッシュチェーン: 正常") || !strings.Contains(out, "requested") || !strings.Contains(out, "denied") {
		t.Fatalf("job: %d %s", code, out)
	}
	// The policy's reason is said in the CLI's language.
	for locale, want := range map[string]string{"ja": "ポリシー: ask.no_grant Auto-Approve はオフです", "en": "policy: ask.no_grant Auto-Approve is off"} {
		if code, out, _ = run(t, url, token, "--locale", locale, "job", "job_20261121_001"); code != ExitOK || !strings.Contains(out, want) {
			t.Errorf("job (%s): %d %s", locale, code, out)
		}
	}
	code, out, _ = run(t, url, token, "--locale", "en", "approve", "--no-execute", "job_20261121_001")
	if code != ExitOK || out != "job_20261121_001: granted\n" {
		t.Fatalf("approve: %d %s", code, out)
	}

	// Exit codes scripts rely on.
	for _, tc := range []struct {
		name string
		tok  string
		args []string
		want int
	}{
		{"decided job", token, []string{"deny", "job_20261121_001"}, ExitConflict},
		{"unknown job", token, []string{"job", "job_20261121_999"}, ExitNotFound},
		{"no token", "", []string{"jobs"}, ExitUnauthorized},
		{"wrong token", "not-a-known-token-000000", []string{"jobs"}, ExitUnauthorized},
		{"bad job id", token, []string{"approve", "job_x"}, ExitUsage},
		{"unknown command", token, []string{"frobnicate"}, ExitUsage},
		{"missing argument", token, []string{"deny"}, ExitUsage},
		{"auto-approve without mode", token, []string{"auto-approve"}, ExitUsage},
	} {
		if code, _, errOut := run(t, url, tc.tok, tc.args...); code != tc.want {
			t.Errorf("%s: exit %d, want %d (%s)", tc.name, code, tc.want, errOut)
		}
	}

	code, out, errOut = run(t, url, token, "auto-approve", "on", "--ttl", "10m", "--paths", "docs/", "--reason", "docs day")
	if code != ExitOK || !strings.Contains(out, "ON") || !strings.Contains(out, "docs") {
		t.Fatalf("auto-approve on: %d %s %s", code, out, errOut)
	}
	code, out, _ = run(t, url, token, "auto-approve", "status")
	if code != ExitOK || !strings.Contains(out, "docs") {
		t.Fatalf("auto-approve status: %d %s", code, out)
	}
	if code, _, errOut = run(t, url, token, "auto-approve", "off"); code != ExitOK {
		t.Fatalf("auto-approve off: %d %s", code, errOut)
	}
}

func TestHelpForEveryCommand(t *testing.T) {
	for _, c := range newRoot(&globals{io: IO{Getenv: func(string) string { return "" }}}).Commands() {
		name := c.Name()
		if name == "help" {
			continue
		}
		code, out, _ := run(t, "http://127.0.0.1:1", token, "help", name)
		if code != ExitOK || !strings.Contains(out, "usage: picoclaw "+name) {
			t.Errorf("help %s: %d %q", name, code, out)
		}
		code, out, _ = run(t, "http://127.0.0.1:1", token, name, "--help")
		if code != ExitOK || !strings.Contains(out, "usage: picoclaw "+name) {
			t.Errorf("%s --help: %d %q", name, code, out)
		}
	}
	if code, out, _ := run(t, "", "", "help"); code != ExitOK || !strings.Contains(out, "exit codes") {
		t.Errorf("help: %d %q", code, out)
	}
}

func TestStatusWhenHeartbeatIsDown(t *testing.T) {
	var out, errOut bytes.Buffer
	env := map[string]string{"PICOCLAW_SERVICES_HEARTBEAT_URL": "http://127.0.0.1:1"}
	for _, kv := range testinfra.AuthEnv(svcauth.CLI) {
		k, v, _ := strings.Cut(kv, "=")
		env[k] = v
	}
	code := Main([]string{"status"}, IO{In: strings.NewReader(""), Out: &out, Err: &errOut, Getenv: func(k string) string { return env[k] }})
	if code != ExitUnavailable {
		t.Fatalf("status with heartbeat down: exit %d (%s)", code, errOut.String())
	}
}
