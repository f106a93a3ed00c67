package app_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/picoclaw-suite/picoclaw/services/approval/internal/app"
	"github.com/picoclaw-suite/picoclaw/services/approval/internal/domain"
)

func TestApproveSimilar(t *testing.T) {
	ctx := context.Background()
	request := func(t *testing.T, svc *app.Service, id, task, patch string) app.RequestResult {
		t.Helper()
		res, err := svc.RequestApproval(ctx, app.RequestInput{JobID: id, Patch: patch, TaskType: task, Route: "CODE1"})
		if err != nil {
			t.Fatal(err)
		}
		return res
	}
	grants := &memGrants{}
	svc, st, now := newApp(t, grants)
	request(t, svc, "job_20260301_001", "docs", `[{"type":"file_edit","action":"update","target":"docs/a.md","content":"x"},{"type":"file_edit","action":"delete","target":"tmp/old.md"}]`)

	// A stranger may not, and the attempt is on the job's trail.
	if _, err := svc.ApproveSimilar(ctx, "job_20260301_001", domain.Actor{ID: "U9", Channel: "line"}, 0, ""); !errors.Is(err, domain.ErrPermission) {
		t.Fatalf("stranger: %v", err)
	}
	if grants.g != nil {
		t.Fatal("a refused approve similar left a grant")
	}
	if _, err := svc.ApproveSimilar(ctx, "job_20260301_001", owner, 25*time.Hour, ""); !errors.Is(err, domain.ErrInvalid) {
		t.Fatalf("25h: %v", err)
	}

	res, err := svc.ApproveSimilar(ctx, "job_20260301_001", owner, 0, "")
	if err != nil {
		t.Fatal(err)
	}
	g := res.Grant
	if res.Job.Status != domain.StatusGranted {
		t.Errorf("job %s", res.Job.Status)
	}
	// The delete adds neither its kind nor its directory; the TTL is the default (30m).
	if !slices.Equal(g.PathPrefixes, []string{"docs"}) || !slices.Equal(g.OperationKinds, []string{"file_edit.update"}) ||
		!slices.Equal(g.TaskTypes, []string{"docs"}) || !slices.Equal(g.Routes, []string{"CODE1"}) ||
		g.SimilarTo != "job_20260301_001" || !g.ExpiresAt.Equal(t0.Add(30*time.Minute)) {
		t.Errorf("grant %+v", g)
	}
	evs := st.events[domain.StreamAutoApprove]
	if len(evs) != 1 || evs[0].Type != domain.EventAutoApproveEnabled || evs[0].PolicyRule != domain.RuleApproveSimilar ||
		!strings.Contains(string(evs[0].Payload), `"similar_to":"job_20260301_001"`) {
		t.Errorf("audit %+v", evs)
	}
	if txt := domain.GrantStatusText(grants.g, *now, "en", false); !strings.Contains(txt, "approve similar: like job_20260301_001") {
		t.Errorf("status text %q", txt)
	}

	cases := []struct {
		name, task, patch string
		want              domain.Status
		rule              string
	}{
		{"same directory and kind", "docs", `[{"type":"file_edit","action":"update","target":"docs/b.md","content":"y"}]`, domain.StatusAutoApproved, domain.RuleAutoApprove},
		{"other directory", "docs", `[{"type":"file_edit","action":"update","target":"src/b.go","content":"y"}]`, domain.StatusPending, domain.RuleScopePath},
		{"other task type", "codegen", `[{"type":"file_edit","action":"update","target":"docs/b.md","content":"y"}]`, domain.StatusPending, domain.RuleScopeTaskType},
		{"other kind", "docs", `[{"type":"file_edit","action":"create","target":"docs/c.md","content":"y"}]`, domain.StatusPending, domain.RuleScopeOperationKind},
		{"delete in scope", "docs", `[{"type":"file_edit","action":"delete","target":"docs/b.md"}]`, domain.StatusPending, "hard_require.delete"},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			id := fmt.Sprintf("job_20260301_1%02d", i)
			r := request(t, svc, id, tc.task, tc.patch)
			if r.Job.Status != tc.want || r.Decision.Rule != tc.rule {
				t.Errorf("%s: status %s rule %s (%s)", id, r.Job.Status, r.Decision.Rule, r.Decision.Reason)
			}
		})
	}

	// Expiry ends the grant.
	*now = t0.Add(31 * time.Minute)
	if r := request(t, svc, "job_20260301_003", "docs", `[{"type":"file_edit","action":"update","target":"docs/d.md","content":"y"}]`); r.Job.Status != domain.StatusPending {
		t.Errorf("after expiry: %s by %s", r.Job.Status, r.Decision.Rule)
	}

	// A grant from /auto-approve on is never replaced by approve similar.
	request(t, svc, "job_20260301_002", "docs", `[{"type":"file_edit","action":"update","target":"src/x.go","content":"x"}]`)
	if _, err := svc.EnableAutoApprove(ctx, owner, app.GrantInput{PathPrefixes: []string{"README.md"}}); err != nil {
		t.Fatal(err)
	}
	if _, err := svc.ApproveSimilar(ctx, "job_20260301_002", owner, time.Hour, ""); !errors.Is(err, domain.ErrConflict) {
		t.Fatalf("over a manual grant: %v", err)
	}
	if j, _ := svc.Get(ctx, "job_20260301_002"); j.Status != domain.StatusPending {
		t.Errorf("a refused approve similar approved the job: %s", j.Status)
	}
}

func TestApproveSimilarRefusesHardRequireOnlyJobs(t *testing.T) {
	ctx := context.Background()
	for name, patch := range map[string]string{
		"delete":  `[{"type":"file_edit","action":"delete","target":"docs/a.md"}]`,
		"rename":  `[{"type":"file_edit","action":"rename","target":"docs/a.md","metadata":{"to":"docs/b.md"}}]`,
		"push":    `[{"type":"git_operation","action":"push","target":"https://git.example.com/team/repo.git","metadata":{"branch":"main"}}]`,
		"shell":   `[{"type":"shell_command","action":"run","target":"ls docs"}]`,
		"browser": `[{"type":"browser","action":"chrome_click","target":"#b"}]`,
		"secret":  `[{"type":"file_edit","action":"update","target":"docs/a","content":"AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"}]`,
	} {
		t.Run(name, func(t *testing.T) {
			grants := &memGrants{}
			svc, _, _ := newApp(t, grants)
			if _, err := svc.RequestApproval(ctx, app.RequestInput{JobID: "job_20260301_001", Patch: patch, TaskType: "docs"}); err != nil {
				t.Fatal(err)
			}
			if _, err := svc.ApproveSimilar(ctx, "job_20260301_001", owner, 0, ""); !errors.Is(err, domain.ErrInvalid) {
				t.Fatalf("err = %v, want ErrInvalid", err)
			}
			if j, _ := svc.Get(ctx, "job_20260301_001"); j.Status != domain.StatusPending || grants.g != nil {
				t.Errorf("status %s grant %+v", j.Status, grants.g)
			}
		})
	}
}
