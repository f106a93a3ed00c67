package ui_test

import (
	"bytes"
	"context"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	approvalv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/approval/v1"
	"github.com/picoclaw-suite/picoclaw/gen/picoclaw/approval/v1/approvalv1connect"
	commonv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/common/v1"
	"github.com/picoclaw-suite/picoclaw/pkg/svcauth"
	"github.com/picoclaw-suite/picoclaw/pkg/testinfra"
	"github.com/picoclaw-suite/picoclaw/services/approval/approvaltest"
)

// approverToken is the REST bearer token of the approver "alice" in these tests.
const approverToken = "console-test-token-0123456789-abcdefghijkl"

type suite struct {
	base   string
	client approvalv1connect.ApprovalServiceClient
}

// startApproval runs the real approval service in-process on SQLite and the test Redis, with
// the approver token given the way production gives it: the PICOCLAW_APPROVAL_TOKENS variable.
func startApproval(t *testing.T, extraEnv map[string]string) *suite {
	t.Helper()
	env := map[string]string{
		"PICOCLAW_APPROVAL_TOKENS": "alice:" + approverToken,
		"PICOCLAW_AUDIT_KEY":       "ui-test-audit-key-0123456789abcdef0123",
	}
	for k, v := range extraEnv {
		env[k] = v
	}
	internal, base := approvaltest.StartFromEnv(t, env)
	return &suite{base: base, client: approvalv1connect.NewApprovalServiceClient(http.DefaultClient, internal, testinfra.AsSuite(t, svcauth.Approval))}
}

func (s *suite) request(t *testing.T, id, summary, plan, patch string) {
	t.Helper()
	res, err := s.client.RequestApproval(context.Background(), &approvalv1.RequestApprovalRequest{
		Proposal: &commonv1.Proposal{JobId: id, Plan: plan, Patch: patch, TaskType: commonv1.TaskType_TASK_TYPE_CODEGEN,
			Order: "order1", Risk: &commonv1.Risk{Level: commonv1.RiskLevel_RISK_LEVEL_MEDIUM, CompatibilityIssues: []string{"API change"}}},
		SessionId: "line:Uowner", Channel: "line", RequestedBy: &commonv1.Actor{Id: "Uowner", Channel: "line"},
		Route: commonv1.Route_ROUTE_CODE1, Summary: summary,
	})
	if err != nil {
		t.Fatalf("request %s: %v", id, err)
	}
	if res.GetOutcome() != approvalv1.Outcome_OUTCOME_PENDING {
		t.Fatalf("request %s: outcome %v, want pending", id, res.GetOutcome())
	}
}

// chromium finds the browser; without one the test skips, unless integration is required.
func chromium(t *testing.T) string {
	t.Helper()
	for _, p := range []string{os.Getenv("PICOCLAW_CHROMIUM"), "/usr/bin/chromium", "chromium", "chromium-browser", "google-chrome"} {
		if p == "" {
			continue
		}
		if path, err := exec.LookPath(p); err == nil {
			return path
		}
	}
	if testinfra.Required() {
		t.Fatal("chromium is not installed and PICOCLAW_REQUIRE_INTEGRATION=1 (install the Debian chromium package)")
	}
	t.Skip("chromium is not installed; install the Debian chromium package to run the console tests")
	return ""
}

// browser starts headless Chromium with a fresh profile; the context ends it.
func browser(t *testing.T) context.Context {
	t.Helper()
	path := chromium(t)
	profile, err := os.MkdirTemp("", "picoclaw-chromium-")
	if err != nil {
		t.Fatal(err)
	}
	opts := []chromedp.ExecAllocatorOption{
		chromedp.ExecPath(path),
		chromedp.Flag("headless", true),
		chromedp.NoSandbox,
		chromedp.DisableGPU,
		chromedp.Flag("disable-quic", true),
		chromedp.NoFirstRun,
		chromedp.Flag("disable-background-networking", true),
		chromedp.Flag("disable-component-update", true),
		chromedp.Flag("disable-sync", true),
		chromedp.UserDataDir(profile),
		chromedp.WindowSize(1280, 1000),
	}
	timeout, cancelTimeout := context.WithTimeout(context.Background(), 45*time.Second)
	alloc, cancelAlloc := chromedp.NewExecAllocator(timeout, opts...)
	ctx, cancelCtx := chromedp.NewContext(alloc, chromedp.WithLogf(t.Logf))
	t.Cleanup(func() {
		cancelCtx()
		cancelAlloc()
		cancelTimeout()
		_ = os.RemoveAll(profile)
	})
	if err := chromedp.Do(ctx); err != nil {
		t.Fatalf("start chromium: %v", err)
	}
	return ctx
}

// artifactsDir is where screenshots go: PICOCLAW_ARTIFACTS_DIR, or a temporary directory.
func artifactsDir(t *testing.T) string {
	t.Helper()
	dir := os.Getenv("PICOCLAW_ARTIFACTS_DIR")
	if dir == "" {
		return t.TempDir()
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	return dir
}

var pngMagic = []byte("\x89PNG\r\n\x1a\n")

// screenshot captures the whole page as PNG, saves it and checks it is one.
func screenshot(t *testing.T, dir, name string) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		buf, err := chromedp.FullScreenshot(100)(ctx, tg)
		if err != nil {
			return err
		}
		if len(buf) < 1000 || !bytes.HasPrefix(buf, pngMagic) {
			t.Errorf("screenshot %s is not a non-empty PNG (%d bytes)", name, len(buf))
		}
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, buf, 0o644); err != nil {
			return err
		}
		t.Logf("screenshot: %s (%d bytes)", path, len(buf))
		return nil
	})
}

// into runs a that reads a value and stores the value in dst, so reads fit in one chromedp.Do.
func into[T any](dst *T, a chromedp.Action[T]) chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, tg *chromedp.Target) error {
		v, err := a(ctx, tg)
		if err == nil {
			*dst = v
		}
		return err
	})
}

// login opens the console and logs in with the approver token.
func login(base string) chromedp.Action[chromedp.Void] {
	return chromedp.Steps(
		chromedp.Navigate(base+"/ui/"),
		chromedp.WaitVisible(chromedp.CSS("#token")),
		chromedp.SendKeys(chromedp.CSS("#token"), approverToken),
		chromedp.Click(chromedp.CSS("#login-btn")),
	)
}
