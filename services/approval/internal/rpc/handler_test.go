//go:build !serveronly

package rpc_test

import (
	"context"
	"errors"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/types/known/durationpb"

	approvalv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/approval/v1"
	"github.com/picoclaw-suite/picoclaw/gen/picoclaw/approval/v1/approvalv1connect"
	commonv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/common/v1"
	"github.com/picoclaw-suite/picoclaw/pkg/patch"
	"github.com/picoclaw-suite/picoclaw/pkg/svcauth"
	"github.com/picoclaw-suite/picoclaw/pkg/testinfra"
	"github.com/picoclaw-suite/picoclaw/services/approval/internal/app"
	"github.com/picoclaw-suite/picoclaw/services/approval/internal/domain"
	"github.com/picoclaw-suite/picoclaw/services/approval/internal/rpc"
	"github.com/picoclaw-suite/picoclaw/services/approval/internal/store"
)

var owner = &commonv1.Actor{Id: "Uowner", Channel: "line"}

// clients returns a Connect and a gRPC client for the real handler behind an HTTP/2 server.
func clients(t *testing.T) map[string]approvalv1connect.ApprovalServiceClient {
	t.Helper()
	st, err := store.OpenSQLite(context.Background(), filepath.Join(t.TempDir(), "audit.db"), store.WithKeyring(testKeys))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = st.Close() })
	rdb := testinfra.Redis(t)
	approvers, err := domain.NewApprovers(domain.ApproverConfig{Line: []string{owner.Id}})
	if err != nil {
		t.Fatal(err)
	}
	svc := app.New(st, store.NewRedisGrants(redisKV(t, rdb), rdb.Prefix, []byte("test-grant-seal-key"), nil), approvers, app.Config{PendingTTL: time.Hour,
		AutoApproveAllowed: true, DefaultGrantTTL: time.Hour, MaxGrantTTL: 24 * time.Hour}, nil, app.WithKeyring(testKeys))
	mux := http.NewServeMux()
	mux.Handle(approvalv1connect.NewApprovalServiceHandler(rpc.NewHandler(svc, nil),
		connect.WithInterceptors(svcauth.NewAuthorizer(testinfra.Credentials(t, svcauth.Approval), nil))))
	srv := httptest.NewUnstartedServer(mux)
	srv.EnableHTTP2 = true
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return map[string]approvalv1connect.ApprovalServiceClient{
		"connect": approvalv1connect.NewApprovalServiceClient(srv.Client(), srv.URL, testinfra.AsSuite(t, svcauth.Approval)),
		"grpc":    approvalv1connect.NewApprovalServiceClient(srv.Client(), srv.URL, connect.WithGRPC(), testinfra.AsSuite(t, svcauth.Approval)),
	}
}

func code(err error) connect.Code {
	var ce *connect.Error
	if errors.As(err, &ce) {
		return ce.Code()
	}
	return 0
}

func TestApprovalServiceOverConnectAndGRPC(t *testing.T) {
	const patchText = `[{"type":"file_edit","action":"update","target":"docs/a.md","content":"x"},{"type":"browser","action":"chrome_get_text","target":"h1"}]`
	for name, c := range clients(t) {
		t.Run(name, func(t *testing.T) {
			ctx := context.Background()
			id := "job_20260301_001"
			if name == "grpc" {
				id = "job_20260301_002"
			}
			res, err := c.RequestApproval(ctx, &approvalv1.RequestApprovalRequest{
				Proposal: &commonv1.Proposal{JobId: id, Plan: "read the title", Patch: patchText, UsesBrowser: false,
					TaskType: commonv1.TaskType_TASK_TYPE_DOCS, Risk: &commonv1.Risk{Level: commonv1.RiskLevel_RISK_LEVEL_LOW}},
				Route: commonv1.Route_ROUTE_CODE2, Channel: "line", Locale: "en", RequestedBy: owner,
			})
			if err != nil {
				t.Fatal(err)
			}
			j := res.GetJob()
			want, _ := patch.Parse(patchText, patch.Options{})
			if res.GetOutcome() != approvalv1.Outcome_OUTCOME_PENDING || !j.GetUsesBrowser() || j.GetContentHash() != want.Hash ||
				j.GetRoute() != commonv1.Route_ROUTE_CODE2 || j.GetTaskType() != commonv1.TaskType_TASK_TYPE_DOCS || len(j.GetOperations()) != 2 {
				t.Fatalf("response = %v", res)
			}
			if !strings.Contains(res.GetRequestText(), domain.BrowserWarningEN) || !strings.Contains(res.GetRequestText(), "/approve "+id) {
				t.Errorf("request text:\n%s", res.GetRequestText())
			}
			if _, err := c.Approve(ctx, &approvalv1.ApproveRequest{JobId: id, Actor: &commonv1.Actor{Id: "Ustranger", Channel: "line"}}); code(err) != connect.CodePermissionDenied {
				t.Errorf("stranger approve = %v", err)
			}
			if _, err := c.Approve(ctx, &approvalv1.ApproveRequest{JobId: "job_20260301_404", Actor: owner}); code(err) != connect.CodeNotFound {
				t.Errorf("unknown job = %v", err)
			}
			if _, err := c.Approve(ctx, &approvalv1.ApproveRequest{JobId: "bogus", Actor: owner}); code(err) != connect.CodeInvalidArgument {
				t.Errorf("bad id = %v", err)
			}
			if _, err := c.Approve(ctx, &approvalv1.ApproveRequest{JobId: strings.ToUpper(id), Actor: owner}); err != nil {
				t.Fatal(err)
			}
			if _, err := c.Deny(ctx, &approvalv1.DenyRequest{JobId: id, Actor: owner}); code(err) != connect.CodeAborted {
				t.Errorf("second decision = %v, want Aborted", err)
			}
			claim, err := c.ClaimJob(ctx, &approvalv1.ClaimJobRequest{JobId: id, ExecutorId: "executor-1"})
			if err != nil || claim.GetPatch() != patchText || claim.GetContentHash() != want.Hash || claim.GetAutoApproved() ||
				claim.GetLeaseToken() == 0 || !claim.GetLeaseExpiresAt().AsTime().After(time.Now()) {
				t.Fatalf("claim = %v, %v", claim, err)
			}
			if _, err := c.ClaimJob(ctx, &approvalv1.ClaimJobRequest{JobId: id, ExecutorId: "executor-1"}); code(err) != connect.CodeAborted {
				t.Errorf("second claim = %v", err)
			}
			renewed, err := c.RenewClaim(ctx, &approvalv1.RenewClaimRequest{JobId: id, ExecutorId: "executor-1", LeaseToken: claim.GetLeaseToken()})
			if err != nil || renewed.GetLeaseExpiresAt().AsTime().Before(claim.GetLeaseExpiresAt().AsTime()) {
				t.Fatalf("renew = %v, %v", renewed, err)
			}
			if lapsed, err := c.ListLapsedClaims(ctx, &approvalv1.ListLapsedClaimsRequest{}); err != nil || len(lapsed.GetJobIds()) != 0 {
				t.Fatalf("lapsed = %v, %v", lapsed, err)
			}
			// Another executor's report (or one without the claim's token) is refused.
			if _, err := c.ReportExecution(ctx, &approvalv1.ReportExecutionRequest{JobId: id, ExecutorId: "executor-2",
				LeaseToken: claim.GetLeaseToken(), Event: approvalv1.ExecutionEvent_EXECUTION_EVENT_REFUSED}); code(err) != connect.CodeAborted {
				t.Errorf("report by a non-holder = %v, want Aborted", err)
			}
			rep, err := c.ReportExecution(ctx, &approvalv1.ReportExecutionRequest{JobId: id, ExecutorId: "executor-1", LeaseToken: claim.GetLeaseToken(),
				Event: approvalv1.ExecutionEvent_EXECUTION_EVENT_HASH_MISMATCH, Detail: "re-hash differs"})
			if err != nil || rep.GetJob().GetStatus() != approvalv1.JobStatus_JOB_STATUS_FAILED {
				t.Fatalf("report = %v, %v", rep, err)
			}
			evs, err := c.ListJobEvents(ctx, &approvalv1.ListJobEventsRequest{JobId: id})
			if err != nil || !evs.GetChainValid() {
				t.Fatalf("events = %v, %v", evs, err)
			}
			last := evs.GetEvents()[len(evs.GetEvents())-1]
			if last.GetType() != "hash_mismatch" || !strings.Contains(last.GetPayloadJson(), `"source":"executor"`) {
				t.Errorf("last event = %v", last)
			}
			list, err := c.ListJobs(ctx, &approvalv1.ListJobsRequest{Statuses: []approvalv1.JobStatus{approvalv1.JobStatus_JOB_STATUS_FAILED}})
			if err != nil || len(list.GetJobs()) == 0 {
				t.Errorf("list failed = %v, %v", list, err)
			}
		})
	}
}

func TestAutoApproveOverConnect(t *testing.T) {
	c := clients(t)["connect"]
	ctx := context.Background()
	set, err := c.SetAutoApprove(ctx, &approvalv1.SetAutoApproveRequest{Actor: owner, Ttl: durationpb.New(30 * time.Minute),
		PathPrefixes: []string{"docs/"}, TaskTypes: []commonv1.TaskType{commonv1.TaskType_TASK_TYPE_DOCS}, Routes: []commonv1.Route{commonv1.Route_ROUTE_CODE1}})
	if err != nil || !set.GetGrant().GetActive() || set.GetGrant().GetRemaining().AsDuration() <= 29*time.Minute {
		t.Fatalf("set = %v, %v", set, err)
	}
	if _, err := c.SetAutoApprove(ctx, &approvalv1.SetAutoApproveRequest{Actor: owner, Ttl: durationpb.New(48 * time.Hour)}); code(err) != connect.CodeInvalidArgument {
		t.Errorf("ttl over max = %v", err)
	}
	res, err := c.RequestApproval(ctx, &approvalv1.RequestApprovalRequest{Route: commonv1.Route_ROUTE_CODE1,
		Proposal: &commonv1.Proposal{JobId: "job_20260301_010", Patch: `[{"type":"file_edit","action":"update","target":"docs/a.md","content":"x"}]`,
			TaskType: commonv1.TaskType_TASK_TYPE_DOCS}})
	if err != nil || res.GetOutcome() != approvalv1.Outcome_OUTCOME_AUTO_APPROVED {
		t.Fatalf("auto-approve = %v, %v", res, err)
	}
	get, err := c.GetAutoApprove(ctx, &approvalv1.GetAutoApproveRequest{Locale: "ja"})
	if err != nil || !get.GetGrant().GetActive() || !strings.Contains(get.GetStatusText(), "ON") {
		t.Errorf("get = %v, %v", get, err)
	}
	off, err := c.DisableAutoApprove(ctx, &approvalv1.DisableAutoApproveRequest{Actor: owner, Locale: "en"})
	if err != nil || !strings.Contains(off.GetStatusText(), "1 auto-approved") {
		t.Fatalf("disable = %v, %v", off, err)
	}
	if _, err := c.ClaimJob(ctx, &approvalv1.ClaimJobRequest{JobId: "job_20260301_010", ExecutorId: "e"}); code(err) != connect.CodeAborted {
		t.Errorf("claim after disable = %v", err)
	}
	if _, err := c.RequestApproval(ctx, &approvalv1.RequestApprovalRequest{Proposal: &commonv1.Proposal{JobId: "job_20260301_011", Patch: `[{"type":"ftp"}]`}}); code(err) != connect.CodeInvalidArgument {
		t.Errorf("bad patch = %v", err)
	} else if !strings.Contains(err.Error(), "command 1") {
		t.Errorf("bad patch error does not name the operation: %v", err)
	}
}

var testKeys = func() *domain.Keyring {
	k, err := domain.NewKeyring([]byte("test-audit-key-0123456789abcdef0123"))
	if err != nil {
		panic(err)
	}
	return k
}()

// redisKV is the grant store's own Redis client on rdb's server, closed when the test ends.
func redisKV(t testing.TB, rdb testinfra.RedisDB) *store.RedisClient {
	c := store.NewRedisClient(store.RedisOptions{Addr: rdb.Addr})
	t.Cleanup(func() { _ = c.Close() })
	return c
}
