package store_test

import (
	"context"
	"fmt"
	"slices"
	"testing"
	"time"

	"github.com/picoclaw-suite/picoclaw/pkg/testinfra"
	"github.com/picoclaw-suite/picoclaw/services/approval/internal/app"
	"github.com/picoclaw-suite/picoclaw/services/approval/internal/domain"
	"github.com/picoclaw-suite/picoclaw/services/approval/internal/store"
)

// BenchmarkApproveAuditClaimPostgres measures one approval (decision event, hash chain and read
// model in one transaction) followed by the executor's claim, against the real Postgres.
// Goal: approve p99 ≤ 5 ms (reported as approve-p99-ms).
func BenchmarkApproveAuditClaimPostgres(b *testing.B) {
	ctx := context.Background()
	db := testinfra.Postgres(b)
	s, err := store.OpenPostgres(ctx, db.DSN, store.WithKeyring(testKeys))
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	rdb := testinfra.Redis(b)
	approvers, _ := domain.NewApprovers(domain.ApproverConfig{Line: []string{approver.ID}})
	svc := app.New(s, store.NewRedisGrants(redisKV(b, rdb), rdb.Prefix, []byte("test-grant-seal-key"), nil), approvers, app.Config{PendingTTL: time.Hour,
		DefaultGrantTTL: time.Hour, MaxGrantTTL: time.Hour}, nil)
	ids := make([]string, b.N)
	for i := range ids {
		ids[i] = fmt.Sprintf("job_20260301_%06d", i+1)
		if _, err := svc.RequestApproval(ctx, req(ids[i], docsPatch)); err != nil {
			b.Fatal(err)
		}
	}
	approveTimes := make([]time.Duration, 0, b.N)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		t0 := time.Now()
		if _, err := svc.Approve(ctx, ids[i], approver, ""); err != nil {
			b.Fatal(err)
		}
		approveTimes = append(approveTimes, time.Since(t0))
		if _, err := svc.ClaimJob(ctx, ids[i], "executor-1"); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	slices.Sort(approveTimes)
	p := func(q float64) float64 {
		return float64(approveTimes[int(q*float64(len(approveTimes)-1))].Microseconds()) / 1000
	}
	b.ReportMetric(p(0.50), "approve-p50-ms")
	b.ReportMetric(p(0.99), "approve-p99-ms")
}

// BenchmarkPolicyCheckWithActiveGrant measures parsing a patch, reading the active grant from
// the real Redis and evaluating the policy. Goal: ≤ 1 ms per check.
func BenchmarkPolicyCheckWithActiveGrant(b *testing.B) {
	ctx := context.Background()
	rdb := testinfra.Redis(b)
	approvers, _ := domain.NewApprovers(domain.ApproverConfig{Line: []string{approver.ID}})
	svc := app.New(nil, store.NewRedisGrants(redisKV(b, rdb), rdb.Prefix, []byte("test-grant-seal-key"), nil), approvers, app.Config{AutoApproveAllowed: true,
		DefaultGrantTTL: time.Hour, MaxGrantTTL: time.Hour}, nil)
	grants := store.NewRedisGrants(redisKV(b, rdb), rdb.Prefix, []byte("test-grant-seal-key"), nil)
	now := time.Now()
	if err := grants.Set(ctx, domain.Grant{ID: "grant_bench", PathPrefixes: []string{"docs"}, TaskTypes: []string{"docs"},
		CreatedAt: now, ExpiresAt: now.Add(time.Hour)}, time.Hour); err != nil {
		b.Fatal(err)
	}
	in := req("job_20260301_001", `[{"type":"file_edit","action":"update","target":"docs/a.md","content":"hello\n"},`+
		`{"type":"file_edit","action":"append","target":"docs/b.md","content":"more\n"},{"type":"git_operation","action":"add","target":"docs"}]`)
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		d, err := svc.CheckPolicy(ctx, in)
		if err != nil || d.Outcome != domain.OutcomeAutoApproved {
			b.Fatalf("%+v %v", d, err)
		}
	}
}
