package service_test

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"

	approvalv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/approval/v1"
	"github.com/picoclaw-suite/picoclaw/gen/picoclaw/approval/v1/approvalv1connect"
	commonv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/common/v1"
	"github.com/picoclaw-suite/picoclaw/pkg/svcauth"
	"github.com/picoclaw-suite/picoclaw/pkg/testinfra"
	"github.com/picoclaw-suite/picoclaw/services/approval/approvaltest"
)

const scrapeToken = "metrics-test-token-0123456789-abcdefghijkl"

// runInProcess serves approval on a test listener with SQLite, the test Redis and env vars.
func runInProcess(t *testing.T, extraEnv map[string]string) (internal, public string) {
	t.Helper()
	env := map[string]string{
		"PICOCLAW_APPROVAL_TOKENS": "alice:" + scrapeToken, "PICOCLAW_APPROVAL_APPROVERS_LINE": "Uowner",
		"PICOCLAW_AUDIT_KEY": testAuditKey,
	}
	for k, v := range extraEnv {
		env[k] = v
	}
	return approvaltest.StartFromEnv(t, env)
}

func rest(t *testing.T, method, url, body string) {
	t.Helper()
	approvaltest.REST(t, scrapeToken, method, url, body)
}

// TestMetricsAfterTraffic drives requests, a person's approval and denial, Auto-Approve and the
// console, then scrapes /metrics and finds the approval series of SPEC §12 with their values.
func TestMetricsAfterTraffic(t *testing.T) {
	base, pubBase := runInProcess(t, map[string]string{"PICOCLAW_APPROVAL_AUTO_APPROVE_ENABLED": "true"})
	c := approvalv1connect.NewApprovalServiceClient(http.DefaultClient, base, testinfra.AsSuite(t, svcauth.Approval))
	ctx := context.Background()
	request := func(n int, want approvalv1.Outcome) {
		t.Helper()
		res, err := c.RequestApproval(ctx, &approvalv1.RequestApprovalRequest{Proposal: &commonv1.Proposal{
			JobId: "job_20260301_" + string(rune('0'+n)) + "00", Plan: "edit docs",
			Patch: `[{"type":"file_edit","action":"update","target":"docs/` + string(rune('a'+n)) + `.md","content":"x"}]`}})
		if err != nil || res.GetOutcome() != want {
			t.Fatalf("request %d: %v, %v (want %v)", n, res.GetOutcome(), err, want)
		}
	}
	for n := 1; n <= 3; n++ {
		request(n, approvalv1.Outcome_OUTCOME_PENDING)
	}
	// The console is served (and counted) by the same process; fetched early, because the
	// server counts a request just after the client has its response.
	resp, err := http.Get(pubBase + "/ui/")
	if err != nil {
		t.Fatal(err)
	}
	_, _ = io.Copy(io.Discard, resp.Body)
	_ = resp.Body.Close()
	time.Sleep(20 * time.Millisecond) // a measurable wait in pending
	if _, err := c.Approve(ctx, &approvalv1.ApproveRequest{JobId: "job_20260301_100", Actor: &commonv1.Actor{Id: "Uowner", Channel: "line"}}); err != nil {
		t.Fatal(err)
	}
	rest(t, http.MethodPost, pubBase+"/v1/jobs/job_20260301_200/deny", `{"reason":"not now"}`)
	rest(t, http.MethodPut, pubBase+"/v1/auto-approve", `{"ttl":"30m","path_prefixes":["docs/"],"reason":"docs"}`)
	request(4, approvalv1.Outcome_OUTCOME_AUTO_APPROVED)

	got := scrape(t, base)
	eq := func(v float64) func(float64) bool { return func(x float64) bool { return x == v } }
	positive := func(x float64) bool { return x > 0 }
	for _, tc := range []struct {
		series string
		ok     func(float64) bool
	}{
		{`picoclaw_approval_requests_total{outcome="pending"}`, eq(3)},
		{`picoclaw_approval_requests_total{outcome="auto_approved"}`, eq(1)},
		{`picoclaw_approval_results_total{kind="granted"}`, eq(1)},
		{`picoclaw_approval_results_total{kind="denied"}`, eq(1)},
		{`picoclaw_approval_pending_jobs`, eq(1)},
		{`picoclaw_approval_oldest_pending_age_seconds`, positive},
		{`picoclaw_approval_pending_wait_seconds_count`, eq(2)},
		{`picoclaw_approval_pending_wait_seconds_sum`, positive},
		{`picoclaw_approval_auto_approve_share`, eq(0.5)},
		{`picoclaw_approval_auto_approve_active`, eq(1)},
		{`picoclaw_approval_auto_approve_remaining_seconds`, func(x float64) bool { return x > 29*60 && x <= 30*60 }},
		{`picoclaw_rpc_requests_total{code="ok",procedure="/picoclaw.approval.v1.ApprovalService/RequestApproval",service="approval"}`, eq(4)},
		{`picoclaw_rpc_request_duration_seconds_count{procedure="/picoclaw.approval.v1.ApprovalService/Approve",service="approval"}`, eq(1)},
		{`picoclaw_http_requests_total{route="/v1/jobs/{id}/deny",service="approval",status="200"}`, eq(1)},
		// chi reports the console page as "/ui" (trailing slash trimmed); the redirect from /ui is a 301.
		{`picoclaw_http_requests_total{route="/ui",service="approval",status="200"}`, eq(1)},
	} {
		v, found := got[tc.series]
		if !found {
			t.Errorf("%s missing from /metrics", tc.series)
			continue
		}
		if !tc.ok(v) {
			t.Errorf("%s = %v", tc.series, v)
		}
	}
}

// scrape reads /metrics into "name{label="value",...}" → value, labels sorted by name.
func scrape(t *testing.T, base string) map[string]float64 {
	t.Helper()
	resp, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	parser := expfmt.NewTextParser(model.UTF8Validation)
	families, err := parser.TextToMetricFamilies(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	out := map[string]float64{}
	key := func(name string, m *dto.Metric) string {
		if len(m.GetLabel()) == 0 {
			return name
		}
		parts := make([]string, 0, len(m.GetLabel()))
		for _, l := range m.GetLabel() {
			parts = append(parts, l.GetName()+`="`+l.GetValue()+`"`)
		}
		return name + "{" + strings.Join(parts, ",") + "}"
	}
	for name, mf := range families {
		for _, m := range mf.GetMetric() {
			switch {
			case m.GetCounter() != nil:
				out[key(name, m)] = m.GetCounter().GetValue()
			case m.GetGauge() != nil:
				out[key(name, m)] = m.GetGauge().GetValue()
			case m.GetHistogram() != nil:
				out[key(name+"_count", m)] = float64(m.GetHistogram().GetSampleCount())
				out[key(name+"_sum", m)] = m.GetHistogram().GetSampleSum()
			}
		}
	}
	return out
}
