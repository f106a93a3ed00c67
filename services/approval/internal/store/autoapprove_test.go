package store_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/picoclaw-suite/picoclaw/pkg/testinfra"
	"github.com/picoclaw-suite/picoclaw/services/approval/internal/app"
	"github.com/picoclaw-suite/picoclaw/services/approval/internal/domain"
	"github.com/picoclaw-suite/picoclaw/services/approval/internal/store"
)

// realService uses the wall clock, because Redis expiry is real time.
func realService(t *testing.T, s app.Store, grants app.GrantStore, allowed bool) *app.Service {
	t.Helper()
	approvers, err := domain.NewApprovers(domain.ApproverConfig{Line: []string{approver.ID}})
	if err != nil {
		t.Fatal(err)
	}
	return app.New(s, grants, approvers, app.Config{
		PendingTTL: 30 * time.Minute, AutoApproveAllowed: allowed, DefaultGrantTTL: time.Hour, MaxGrantTTL: 24 * time.Hour,
		BroadOverwriteFiles: 3, Policy: domain.PolicyConfig{HardDenyPaths: []string{".git"}, CostLimitUSD: 1, TokenLimit: 100000},
	}, nil)
}

func pgStoreAndGrants(t *testing.T) (app.Store, *store.RedisGrants, testinfra.RedisDB) {
	t.Helper()
	b := openPostgres(t)
	rdb := testinfra.Redis(t)
	return b.store, store.NewRedisGrants(redisKV(t, rdb), rdb.Prefix, []byte("test-grant-seal-key"), nil), rdb
}

func req(id, patchText string) app.RequestInput {
	return app.RequestInput{JobID: id, Patch: patchText, TaskType: "docs", Route: "CODE2", Plan: "p",
		RequestedBy: domain.Actor{ID: "chat-mio", Channel: "system"}}
}

func TestAutoApproveScopeAndHardRequire(t *testing.T) {
	ctx := context.Background()
	s, grants, _ := pgStoreAndGrants(t)
	svc := realService(t, s, grants, true)
	n := 0
	next := func() string { n++; return fmt.Sprintf("job_20260302_%03d", n) }

	// Without a grant everything asks.
	res, err := svc.RequestApproval(ctx, req(next(), docsPatch))
	if err != nil || res.Decision.Outcome != domain.OutcomePending || res.Decision.Rule != domain.RuleAskNoGrant {
		t.Fatalf("no grant: %+v %v", res.Decision, err)
	}

	if _, err := svc.EnableAutoApprove(ctx, approver, app.GrantInput{TTL: 10 * time.Minute, PathPrefixes: []string{"docs/"}}); err != nil {
		t.Fatal(err)
	}
	res, err = svc.RequestApproval(ctx, req(next(), docsPatch))
	if err != nil || res.Decision.Outcome != domain.OutcomeAutoApproved || res.Job.Status != domain.StatusAutoApproved {
		t.Fatalf("docs patch under docs/ grant: %+v %v", res.Decision, err)
	}
	claimed, err := svc.ClaimJob(ctx, res.Job.ID, "executor-1")
	if err != nil || !claimed.AutoApproved {
		t.Fatalf("claim auto-approved: %+v %v", claimed, err)
	}
	twoDirs := `[{"type":"file_edit","action":"update","target":"docs/a.md","content":"a"},{"type":"file_edit","action":"update","target":"docsx/b.md","content":"b"}]`
	res, err = svc.RequestApproval(ctx, req(next(), twoDirs))
	if err != nil || res.Decision.Outcome != domain.OutcomePending || res.Decision.Rule != domain.RuleScopePath {
		t.Fatalf("docs/ + docsx/ under docs/ grant: %+v %v", res.Decision, err)
	}

	// Whatever the scope: an unrestricted grant still never auto-approves a hard-require patch.
	if _, err := svc.EnableAutoApprove(ctx, approver, app.GrantInput{TTL: 10 * time.Minute}); err != nil {
		t.Fatal(err)
	}
	many := make([]string, 4)
	for i := range many {
		many[i] = fmt.Sprintf(`{"type":"file_edit","action":"update","target":"docs/%d.md","content":"x"}`, i)
	}
	tests := []struct {
		name, patch string
		rule        string
		cost        domain.CostHint
		browser     bool
	}{
		{"delete", `[{"type":"file_edit","action":"delete","target":"docs/old.md"}]`, "hard_require.delete", domain.CostHint{}, false},
		{"rename", `[{"type":"file_edit","action":"rename","target":"docs/a.md","metadata":{"to":"docs/b.md"}}]`, "hard_require.rename", domain.CostHint{}, false},
		{"secret", `[{"type":"file_edit","action":"create","target":"docs/key.md","content":"token: ghp_abcdefghijklmnopqrstuvwxyz0123456789"}]`, "hard_require.send_sensitive", domain.CostHint{}, false},
		{"push", `[{"type":"git_operation","action":"push","target":"https://git.example.com/team/repo.git","metadata":{"branch":"main"}}]`, "hard_require.push_public", domain.CostHint{}, false},
		{"publish in shell", `[{"type":"shell_command","action":"run","target":"npm publish"}]`, "hard_require.push_public", domain.CostHint{}, false},
		{"browser with uses_browser=false", `[{"type":"browser","action":"chrome_get_text","target":"h1"}]`, "hard_require.browser", domain.CostHint{}, false},
		{"browser fill", `[{"type":"browser","action":"chrome_fill_or_select","target":"#q","content":"tea"}]`, "hard_require.browser", domain.CostHint{}, false},
		{"browser in markdown", "```json\n[{\"type\":\"browser\",\"action\":\"chrome_navigate\",\"target\":\"https://example.com\"}]\n```\n", "hard_require.browser", domain.CostHint{}, false},
		{"declared browser", docsPatch, domain.RuleProposalBrowser, domain.CostHint{}, true},
		{"broad overwrite", "[" + strings.Join(many, ",") + "]", "hard_require.broad_overwrite", domain.CostHint{}, false},
		{"cost over limit", docsPatch, domain.RuleCostOverLimit, domain.CostHint{EstimatedCostUSD: 2}, false},
		{"tokens over limit", docsPatch, domain.RuleCostOverLimit, domain.CostHint{EstimatedTokens: 200000}, false},
		{"unknown block", "```python\nprint(1)\n```\n```go:docs/x.go\npackage x\n```\n", domain.RuleUnknownBlocks, domain.CostHint{}, false},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			in := req(next(), tc.patch)
			in.Cost, in.UsesBrowser = tc.cost, tc.browser
			res, err := svc.RequestApproval(ctx, in)
			if err != nil {
				t.Fatal(err)
			}
			if res.Decision.Outcome != domain.OutcomePending || res.Decision.Rule != tc.rule {
				t.Errorf("decision %+v, want pending by %s", res.Decision, tc.rule)
			}
			if strings.Contains(tc.name, "browser") {
				if !res.Job.UsesBrowser || !strings.Contains(res.Text, domain.BrowserWarningJA) {
					t.Errorf("browser job: uses_browser=%v, text:\n%s", res.Job.UsesBrowser, res.Text)
				}
			}
		})
	}
	// A browser action the MCP Chrome bridge has no tool for is invalid, not a job.
	if _, err := svc.RequestApproval(ctx, req(next(), `[{"type":"browser","action":"chrome_execute_script","content":"1"}]`)); !errors.Is(err, domain.ErrInvalid) ||
		!strings.Contains(err.Error(), "chrome_execute_script") {
		t.Errorf("execute script: %v", err)
	}
	// Hard deny wins over everything.
	res, err = svc.RequestApproval(ctx, req(next(), `[{"type":"file_edit","action":"update","target":"sub/.git/config","content":"x"}]`))
	if err != nil || res.Decision.Outcome != domain.OutcomeRefused || res.Job.Status != domain.StatusRefused {
		t.Fatalf(".git write: %+v %v", res.Decision, err)
	}
	if _, err := svc.ClaimJob(ctx, res.Job.ID, "executor-1"); !errors.Is(err, domain.ErrConflict) {
		t.Errorf("claim of refused job = %v", err)
	}
}

func TestAutoApproveTTLAndDisable(t *testing.T) {
	ctx := context.Background()
	s, grants, rdb := pgStoreAndGrants(t)
	svc := realService(t, s, grants, true)

	g, err := svc.EnableAutoApprove(ctx, approver, app.GrantInput{TTL: 2 * time.Second, PathPrefixes: []string{"docs"}})
	if err != nil {
		t.Fatal(err)
	}
	if ttl := rdb.Client.PTTL(ctx, rdb.Prefix+"approval:auto_approve").Val(); ttl <= 0 || ttl > 2*time.Second {
		t.Fatalf("grant key TTL = %s, want the grant's 2s", ttl)
	}
	res, err := svc.RequestApproval(ctx, req("job_20260303_001", docsPatch))
	if err != nil || res.Job.Status != domain.StatusAutoApproved {
		t.Fatalf("within TTL: %+v %v", res.Job.Status, err)
	}
	time.Sleep(time.Until(g.ExpiresAt))
	deadline := g.ExpiresAt.Add(time.Second)
	res, err = svc.RequestApproval(ctx, req("job_20260303_002", docsPatch))
	if err != nil || res.Job.Status != domain.StatusPending {
		t.Fatalf("after expiry: %s %v", res.Job.Status, err)
	}
	for rdb.Client.Exists(ctx, rdb.Prefix+"approval:auto_approve").Val() == 1 {
		if time.Now().After(deadline) {
			t.Fatal("grant key still present 1s after expiry")
		}
		time.Sleep(20 * time.Millisecond)
	}
	if time.Now().After(deadline) {
		t.Error("expiry took effect later than 1s")
	}
	// The job auto-approved under the expired grant cannot be claimed any more.
	if _, err := svc.ClaimJob(ctx, "job_20260303_001", "executor-1"); !errors.Is(err, domain.ErrConflict) {
		t.Fatalf("claim after grant expiry = %v, want ErrConflict", err)
	}
	if j, _ := s.Get(ctx, "job_20260303_001"); j.Status != domain.StatusPending {
		t.Errorf("job after grant expiry = %s, want pending", j.Status)
	}

	// Disable: an auto-approved, unclaimed job can no longer be claimed.
	if _, err := svc.EnableAutoApprove(ctx, approver, app.GrantInput{TTL: time.Hour}); err != nil {
		t.Fatal(err)
	}
	res, err = svc.RequestApproval(ctx, req("job_20260303_003", docsPatch))
	if err != nil || res.Job.Status != domain.StatusAutoApproved {
		t.Fatalf("auto-approve again: %s %v", res.Job.Status, err)
	}
	n, err := svc.DisableAutoApprove(ctx, approver, "done")
	if err != nil || n != 1 {
		t.Fatalf("disable revoked %d jobs, %v; want 1", n, err)
	}
	if _, err := svc.ClaimJob(ctx, "job_20260303_003", "executor-1"); !errors.Is(err, domain.ErrConflict) {
		t.Fatalf("claim after disable = %v, want ErrConflict", err)
	}
	if st := svc.AutoApproveStatus(ctx); st.Grant != nil || st.Unavailable {
		t.Errorf("status after disable = %+v", st)
	}
	// A person can still approve it, and then it runs.
	if _, err := svc.Approve(ctx, "job_20260303_003", approver, ""); err != nil {
		t.Fatal(err)
	}
	if j, err := svc.ClaimJob(ctx, "job_20260303_003", "executor-1"); err != nil || j.AutoApproved {
		t.Fatalf("claim after human approval: %+v %v", j, err)
	}
	assertConsistent(t, s, "job_20260303_003")

	// Every change of the grant is in the audit log.
	evs := events(t, s, domain.StreamAutoApprove)
	if countType(evs, domain.EventAutoApproveEnabled) != 2 || countType(evs, domain.EventAutoApproveDisabled) != 1 {
		t.Errorf("grant audit: %d enabled, %d disabled", countType(evs, domain.EventAutoApproveEnabled), countType(evs, domain.EventAutoApproveDisabled))
	}
	if err := testKeys.VerifyChain(evs); err != nil {
		t.Error(err)
	}
}

func TestAutoApproveLimitsAndPermissions(t *testing.T) {
	ctx := context.Background()
	s, grants, _ := pgStoreAndGrants(t)
	svc := realService(t, s, grants, true)
	if _, err := svc.EnableAutoApprove(ctx, approver, app.GrantInput{TTL: 25 * time.Hour}); !errors.Is(err, domain.ErrInvalid) {
		t.Errorf("ttl over max = %v, want ErrInvalid", err)
	}
	for _, in := range []app.GrantInput{{TaskTypes: []string{"poetry"}}, {Routes: []string{"CODE9"}}, {PathPrefixes: []string{"../x"}}, {DeniedOperations: []string{"format_disk"}}} {
		if _, err := svc.EnableAutoApprove(ctx, approver, in); !errors.Is(err, domain.ErrInvalid) {
			t.Errorf("%+v = %v, want ErrInvalid", in, err)
		}
	}
	if _, err := svc.EnableAutoApprove(ctx, stranger, app.GrantInput{}); !errors.Is(err, domain.ErrPermission) {
		t.Errorf("stranger enable = %v", err)
	}
	if _, err := svc.DisableAutoApprove(ctx, stranger, ""); !errors.Is(err, domain.ErrPermission) {
		t.Errorf("stranger disable = %v", err)
	}
	if got := countType(events(t, s, domain.StreamAutoApprove), domain.EventAccessRefused); got != 2 {
		t.Errorf("%d refusals audited, want 2", got)
	}
	g, err := svc.EnableAutoApprove(ctx, approver, app.GrantInput{})
	if err != nil || g.ExpiresAt.Sub(g.CreatedAt) != time.Hour {
		t.Errorf("default TTL grant = %+v, %v", g, err)
	}
	denied, err := svc.EnableAutoApprove(ctx, approver, app.GrantInput{DeniedOperations: []string{"update"}, TaskTypes: []string{"review"}})
	if err != nil {
		t.Fatal(err)
	}
	_ = denied
	res, err := svc.RequestApproval(ctx, req("job_20260304_001", docsPatch))
	if err != nil || res.Decision.Rule != domain.RuleScopeTaskType {
		t.Errorf("task type outside grant: %+v %v", res.Decision, err)
	}

	off := realService(t, s, grants, false)
	if _, err := off.EnableAutoApprove(ctx, approver, app.GrantInput{}); !errors.Is(err, domain.ErrPermission) {
		t.Errorf("enable while disabled by configuration = %v", err)
	}
}

func TestAutoApproveFailsClosedWithoutRedis(t *testing.T) {
	ctx := context.Background()
	b := openPostgres(t)
	// A grant in a reachable Redis, read through a client that cannot reach it.
	rdb := testinfra.Redis(t)
	good := store.NewRedisGrants(redisKV(t, rdb), rdb.Prefix, []byte("test-grant-seal-key"), nil)
	svc := realService(t, b.store, good, true)
	if _, err := svc.EnableAutoApprove(ctx, approver, app.GrantInput{TTL: time.Hour}); err != nil {
		t.Fatal(err)
	}
	down := store.NewRedisClient(store.RedisOptions{Addr: "127.0.0.1:1", DialTimeout: 200 * time.Millisecond, MaxRetries: -1})
	t.Cleanup(func() { _ = down.Close() })
	broken := realService(t, b.store, store.NewRedisGrants(down, rdb.Prefix, []byte("test-grant-seal-key"), nil), true)
	res, err := broken.RequestApproval(ctx, req("job_20260305_001", docsPatch))
	if err != nil || res.Job.Status != domain.StatusPending || res.Decision.Rule != domain.RuleAskNoGrant {
		t.Fatalf("request with Redis down: %+v %v", res.Decision, err)
	}
	if st := broken.AutoApproveStatus(ctx); !st.Unavailable || st.Grant != nil {
		t.Errorf("status with Redis down = %+v", st)
	}
	if _, err := broken.EnableAutoApprove(ctx, approver, app.GrantInput{}); !errors.Is(err, domain.ErrUnavailable) {
		t.Errorf("enable with Redis down = %v", err)
	}
	// An auto-approved job is not claimable while the grant cannot be checked.
	res, err = svc.RequestApproval(ctx, req("job_20260305_002", docsPatch))
	if err != nil || res.Job.Status != domain.StatusAutoApproved {
		t.Fatalf("auto-approve: %v %v", res.Job.Status, err)
	}
	if _, err := broken.ClaimJob(ctx, "job_20260305_002", "executor-1"); !errors.Is(err, domain.ErrConflict) {
		t.Errorf("claim with Redis down = %v, want ErrConflict", err)
	}
}
