package suite_test

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/picoclaw-suite/picoclaw/pkg/svcauth"

	dto "github.com/prometheus/client_model/go"
	"github.com/prometheus/common/expfmt"
	"github.com/prometheus/common/model"
	"google.golang.org/protobuf/types/known/durationpb"

	approvalv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/approval/v1"
	"github.com/picoclaw-suite/picoclaw/gen/picoclaw/approval/v1/approvalv1connect"
	commonv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/common/v1"
	"github.com/picoclaw-suite/picoclaw/pkg/testinfra"

	"github.com/picoclaw-suite/picoclaw/bench/internal/suite"
)

// TestMetricsAfterTraffic runs the real binaries, sends LINE messages through the CHAT route
// and approval requests through the Connect API, then scrapes /metrics of the services involved
// and expects the SPEC §12 series with non-zero values.
func TestMetricsAfterTraffic(t *testing.T) {
	pg := testinfra.Postgres(t)
	rd := testinfra.Redis(t)
	wd, _ := os.Getwd()
	root, err := suite.Root(wd)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Minute)
	defer cancel()
	bin := t.TempDir()
	if err := suite.Build(ctx, root, bin); err != nil {
		t.Fatal(err)
	}
	line := suite.NewLineAPI()
	defer line.Close()
	ollama := suite.NewOllama(new(atomic.Int64), "chat-v1:latest", "worker-v1:latest")
	defer ollama.Close()
	users := []string{"Ubench0000000000000000000000000001", "Ubench0000000000000000000000000002"}
	caEnv, err := line.CAEnv(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	s, err := suite.Start(ctx, suite.Options{
		Root: root, BinDir: bin, LogDir: t.TempDir(), LineAPI: line.URL, Ollama: ollama.URL, LineUsers: users,
		Iso: &suite.Isolation{DSN: pg.DSN, RedisAddr: rd.Addr, RedisPrefix: rd.Prefix},
		Env: append(caEnv, "PICOCLAW_APPROVAL_AUTO_APPROVE_ENABLED=true", "PICOCLAW_LOG_LEVEL=warn"),
	})
	if err != nil {
		t.Fatal(err)
	}
	defer func() {
		if t.Failed() {
			t.Logf("service logs:\n%s", s.LogTails(40))
		}
		if err := s.Stop(); err != nil {
			t.Error(err)
		}
	}()

	// LINE → gateway-line → chat-mio → router-shiro (classifier: the text asks for something,
	// so cheap signals leave it to the model) → chat model → reply.
	hook := suite.Webhook{URL: s.Procs["gateway-line"].PublicURL() + "/line/webhook", Client: http.DefaultClient}
	const messages = 6
	for i := range messages {
		tok := fmt.Sprintf("reply-token-%d", i)
		wait := line.Await(tok)
		body := suite.TextEvent(fmt.Sprintf("01HBENCHEVENT%04d", i), users[i%2], tok, "ちょっと相談してもいい?", time.Now())
		if code, err := hook.Post(body, suite.Sign(body)); err != nil || code != http.StatusOK {
			t.Fatalf("webhook: %d %v", code, err)
		}
		select {
		case r := <-wait:
			if r.Text == "" {
				t.Fatal("empty reply")
			}
		case <-ctx.Done():
			t.Fatal("no reply at the fake LINE API")
		}
	}

	// Approvals: pending → approve → claim, a hard-denied one, and one under Auto-Approve.
	ap := approvalv1connect.NewApprovalServiceClient(http.DefaultClient, s.Procs["approval"].URL(), testinfra.AsSuite(t, svcauth.Approval))
	actor := &commonv1.Actor{Id: suite.Approver, Channel: "cli"}
	request := func(id, patch string) approvalv1.Outcome {
		t.Helper()
		res, err := ap.RequestApproval(ctx, &approvalv1.RequestApprovalRequest{Proposal: &commonv1.Proposal{
			JobId: id, Plan: "docs", Patch: patch, TaskType: commonv1.TaskType_TASK_TYPE_DOCS}, Route: commonv1.Route_ROUTE_CODE})
		if err != nil {
			t.Fatalf("request %s: %v", id, err)
		}
		return res.GetOutcome()
	}
	edit := func(p string) string {
		return `[{"type":"file_edit","action":"update","target":"` + p + `","content":"x"}]`
	}
	if o := request("job_20260301_00000001", edit("docs/a.md")); o != approvalv1.Outcome_OUTCOME_PENDING {
		t.Fatalf("outcome %v", o)
	}
	if _, err := ap.Approve(ctx, &approvalv1.ApproveRequest{JobId: "job_20260301_00000001", Actor: actor}); err != nil {
		t.Fatal(err)
	}
	if _, err := ap.ClaimJob(ctx, &approvalv1.ClaimJobRequest{JobId: "job_20260301_00000001", ExecutorId: "bench"}); err != nil {
		t.Fatal(err)
	}
	if o := request("job_20260301_00000002", edit("docs/b.md")); o != approvalv1.Outcome_OUTCOME_PENDING {
		t.Fatalf("outcome %v", o)
	}
	if o := request("job_20260301_00000003", edit(".git/config")); o != approvalv1.Outcome_OUTCOME_REFUSED {
		t.Fatalf("hard deny outcome %v", o)
	}
	if _, err := ap.SetAutoApprove(ctx, &approvalv1.SetAutoApproveRequest{Actor: actor, Ttl: durationpb.New(10 * time.Minute),
		Reason: "metrics test"}); err != nil {
		t.Fatal(err)
	}
	if o := request("job_20260301_00000004", edit("docs/c.md")); o != approvalv1.Outcome_OUTCOME_AUTO_APPROVED {
		t.Fatalf("auto-approve outcome %v", o)
	}
	time.Sleep(20 * time.Millisecond) // the pending job has a measurable age

	gw := scrape(t, s.Procs["gateway-line"].URL())
	chat := scrape(t, s.Procs["chat-mio"].URL())
	router := scrape(t, s.Procs["router-shiro"].URL())
	appr := scrape(t, s.Procs["approval"].URL())
	stream := rd.Prefix + "inbox:line"
	for _, c := range []struct {
		name   string
		fams   map[string]*dto.MetricFamily
		metric string
		labels map[string]string
		min    float64
	}{
		{"webhook requests", gw, "picoclaw_http_requests_total", map[string]string{"route": "/line/webhook", "status": "200"}, messages},
		{"webhook latency", gw, "picoclaw_http_request_duration_seconds", map[string]string{"route": "/line/webhook"}, messages},
		{"events stored", gw, "picoclaw_inbox_events_total", map[string]string{"stream": stream, "outcome": "stored"}, messages},
		{"entries acked", gw, "picoclaw_inbox_entries_total", map[string]string{"stream": stream, "outcome": "acked"}, messages},
		{"stream wait", gw, "picoclaw_inbox_wait_seconds", map[string]string{"stream": stream}, messages},
		{"stream length", gw, "picoclaw_inbox_stream_length_entries", map[string]string{"stream": stream}, messages},
		{"chat rpc count", chat, "picoclaw_rpc_requests_total", map[string]string{"procedure": "/picoclaw.chat.v1.ChatService/HandleMessage", "code": "ok"}, messages},
		{"chat rpc latency", chat, "picoclaw_rpc_request_duration_seconds", map[string]string{"procedure": "/picoclaw.chat.v1.ChatService/HandleMessage"}, messages},
		{"chat llm calls", chat, "picoclaw_llm_calls_total", map[string]string{"provider": "ollama", "outcome": "ok"}, messages},
		{"chat llm tokens", chat, "picoclaw_llm_tokens_total", map[string]string{"provider": "ollama", "direction": "input"}, 1},
		{"router rpc count", router, "picoclaw_rpc_requests_total", map[string]string{"procedure": "/picoclaw.router.v1.RouterService/ProcessTask", "code": "ok"}, messages},
		{"router llm calls", router, "picoclaw_llm_calls_total", map[string]string{"provider": "ollama", "outcome": "ok"}, messages},
		{"router llm tokens", router, "picoclaw_llm_tokens_total", map[string]string{"provider": "ollama", "direction": "output"}, 1},
		{"approvals pending", appr, "picoclaw_approval_requests_total", map[string]string{"outcome": "pending"}, 2},
		{"approvals refused", appr, "picoclaw_approval_requests_total", map[string]string{"outcome": "refused"}, 1},
		{"approvals auto", appr, "picoclaw_approval_requests_total", map[string]string{"outcome": "auto_approved"}, 1},
		{"pending jobs", appr, "picoclaw_approval_pending_jobs", nil, 1},
		{"pending age", appr, "picoclaw_approval_oldest_pending_age_seconds", nil, 0.01},
		{"approve rpc", appr, "picoclaw_rpc_requests_total", map[string]string{"procedure": "/picoclaw.approval.v1.ApprovalService/Approve", "code": "ok"}, 1},
		{"claim rpc latency", appr, "picoclaw_rpc_request_duration_seconds", map[string]string{"procedure": "/picoclaw.approval.v1.ApprovalService/ClaimJob"}, 1},
	} {
		got, ok := value(c.fams, c.metric, c.labels)
		if !ok {
			t.Errorf("%s: no series %s%v", c.name, c.metric, c.labels)
			continue
		}
		if got < c.min {
			t.Errorf("%s: %s%v = %v, want >= %v", c.name, c.metric, c.labels, got, c.min)
		}
	}
	// Lag gauges exist for the LINE stream; after the replies nothing is left undelivered.
	if lag, ok := value(gw, "picoclaw_inbox_stream_lag_entries", map[string]string{"stream": stream, "group": "gateway-line"}); !ok || lag != 0 {
		t.Errorf("stream lag = %v (present %v), want 0 after draining", lag, ok)
	}
	if _, ok := value(gw, "picoclaw_inbox_stream_pending_entries", map[string]string{"stream": stream}); !ok {
		t.Error("no pending-entries gauge for the LINE stream")
	}
}

func scrape(t *testing.T, base string) map[string]*dto.MetricFamily {
	t.Helper()
	res, err := http.Get(base + "/metrics")
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	p := expfmt.NewTextParser(model.UTF8Validation)
	fams, err := p.TextToMetricFamilies(res.Body)
	if err != nil {
		t.Fatalf("parse %s/metrics: %v", base, err)
	}
	return fams
}

// value sums the series of metric whose labels include want: counter and gauge values,
// histogram sample counts.
func value(fams map[string]*dto.MetricFamily, metric string, want map[string]string) (float64, bool) {
	mf, ok := fams[metric]
	if !ok {
		return 0, false
	}
	sum, found := 0.0, false
	for _, m := range mf.GetMetric() {
		labels := map[string]string{}
		for _, l := range m.GetLabel() {
			labels[l.GetName()] = l.GetValue()
		}
		match := true
		for k, v := range want {
			if labels[k] != v {
				match = false
			}
		}
		if !match {
			continue
		}
		found = true
		switch {
		case m.GetCounter() != nil:
			sum += m.GetCounter().GetValue()
		case m.GetGauge() != nil:
			sum += m.GetGauge().GetValue()
		case m.GetHistogram() != nil:
			sum += float64(m.GetHistogram().GetSampleCount())
		}
	}
	return sum, found
}
