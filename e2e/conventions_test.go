package e2e

import (
	"io"
	"net/http"
	"os"
	"regexp"
	"strings"
	"testing"
)

// TestSpansFollowTheConventions: what the binaries export carries the OpenTelemetry conventions —
// every model call a "chat <model>" span with gen_ai.*, every Redis command a span of the Redis
// instrumentation, every outbound HTTP call (the LINE API, the model server) a client span with
// the HTTP attributes, and job_id on the REST API's spans of a job.
func TestSpansFollowTheConventions(t *testing.T) {
	s := startSuite(t, binDir, "PICOCLAW_CHAT_REPLY_BUDGET=1ms")
	lc := &lineChat{s: s, t: t}
	before := len(s.lineMessages())
	lc.say("01E2ECONVCHAT000000000001", "こんにちは")
	lc.wait("the chat reply", before, func(outMessage) bool { return true })
	// A worker route: router-shiro's own model call.
	before = len(s.lineMessages())
	lc.say("01E2ECONVPLAN000000000001", "/plan 来週のリリース手順")
	lc.wait("the plan reply", before, func(outMessage) bool { return true })
	// A Slack message: the gateway's answer goes to the Slack API.
	slackBefore := len(s.slackMessages())
	s.slackEvent(t, "EvE2ECONV001", map[string]any{
		"type": "app_mention", "user": slackUser, "channel": "CE2ECONV", "ts": "1790000000.000101", "event_ts": "1790000000.000101",
		"text": "<@" + slackBotUser + "> こんにちは",
	})
	waitMessage(t, "the Slack reply", flowTimeout, s.slackMessages, s.slack.Problems, func(outMessage) bool {
		return len(s.slackMessages()) > slackBefore
	})
	rest := lc.request("01E2ECONVREST000000000001", codeRequest)
	var job, approved map[string]any
	s.approvalAPI(t, http.MethodGet, "/v1/jobs/"+rest.job, nil, &job)
	s.approvalAPI(t, http.MethodPost, "/v1/jobs/"+rest.job+"/approve", map[string]any{}, &approved)
	lc.waitPush(rest.job+" notice", func(m outMessage) bool { return strings.Contains(m.text(), rest.job) })
	s.noProblems(t)
	assertMonitoringMetricsExist(t, s)
	s.stop(t)
	spans := s.otlp.Spans()

	find := func(what string, ok func(span) bool) span {
		t.Helper()
		for _, sp := range spans {
			if ok(sp) {
				return sp
			}
		}
		t.Errorf("no span: %s", what)
		return span{Attrs: map[string]string{}}
	}
	// Model calls: chat-mio's chat model, router-shiro's worker/classifier and coder-order's
	// proposal, by the GenAI conventions.
	for _, svc := range []string{"chat-mio", "router-shiro", "coder-order"} {
		sp := find(svc+" model call", func(sp span) bool {
			return sp.Service == svc && strings.HasPrefix(sp.Name, "chat ") && sp.Attrs["gen_ai.system"] != ""
		})
		for _, k := range []string{"gen_ai.request.model", "gen_ai.usage.input_tokens", "gen_ai.usage.output_tokens"} {
			if sp.Attrs[k] == "" {
				t.Errorf("%s model span %q lacks %s: %v", svc, sp.Name, k, sp.Attrs)
			}
		}
	}
	// Redis commands, in every service that keeps state in Redis (approval through its own hook).
	for _, svc := range []string{"gateway-line", "gateway-slack", "chat-mio", "heartbeat", "approval"} {
		sp := find(svc+" Redis command", func(sp span) bool {
			return sp.Service == svc && (strings.Contains(sp.Scope, "redisotel") || svc == "approval") && sp.Attrs["db.system"] == "redis"
		})
		if sp.Name == "" || strings.Contains(sp.Attrs["db.statement"], "こんにちは") {
			t.Errorf("%s Redis span %q %v", svc, sp.Name, sp.Attrs)
		}
	}
	// Outbound HTTP: the LINE and Slack APIs from their gateways, the model server from chat-mio,
	// router-shiro and coder-order.
	for _, svc := range []string{"gateway-line", "gateway-slack", "chat-mio", "router-shiro", "coder-order"} {
		sp := find(svc+" outbound HTTP", func(sp span) bool {
			return sp.Service == svc && strings.Contains(sp.Scope, "otelhttp") && sp.Attrs["http.request.method"] == "POST" &&
				sp.Attrs["server.address"] != ""
		})
		if sp.Attrs["http.response.status_code"] == "" {
			t.Errorf("%s outbound span %q lacks the status: %v", svc, sp.Name, sp.Attrs)
		}
	}
	// The REST API's spans of a job name it: reading it and approving it.
	find("REST job with job_id", func(sp span) bool {
		return sp.Service == "approval" && strings.HasSuffix(sp.Name, "/v1/jobs/{id}") && sp.JobID == rest.job
	})
	find("REST approve with job_id", func(sp span) bool {
		return sp.Service == "approval" && strings.Contains(sp.Name, "/v1/jobs/{id}/approve") && sp.JobID == rest.job
	})
}

// assertMonitoringMetricsExist: every picoclaw_ metric the shipped alert rules and Grafana
// dashboard (deploy/monitoring) query is served by a running service, and every metric the
// services serve carries the picoclaw_ prefix (besides the Go and process collectors').
func assertMonitoringMetricsExist(t *testing.T, s *suite) {
	t.Helper()
	served := map[string]string{}
	for _, svc := range []string{"gateway-line", "gateway-slack", "chat-mio", "router-shiro", "coder-order", "approval", "executor", "heartbeat"} {
		res, err := http.Get(s.url(svc, "/metrics"))
		if err != nil {
			t.Fatalf("%s metrics: %v", svc, err)
		}
		body, _ := io.ReadAll(res.Body)
		res.Body.Close()
		for _, line := range strings.Split(string(body), "\n") {
			if name, ok := strings.CutPrefix(line, "# TYPE "); ok {
				name = strings.Fields(name)[0]
				served[name] = svc
				if !strings.HasPrefix(name, "picoclaw_") && !strings.HasPrefix(name, "go_") && !strings.HasPrefix(name, "process_") && !strings.HasPrefix(name, "promhttp_") {
					t.Errorf("%s serves %s without the picoclaw_ prefix", svc, name)
				}
			}
		}
	}
	metric := regexp.MustCompile(`picoclaw_[a-z_]+`)
	for _, f := range []string{"../deploy/monitoring/alerts.yaml", "../deploy/monitoring/grafana-dashboard.json"} {
		b, err := os.ReadFile(f)
		if err != nil {
			t.Fatal(err)
		}
		for _, name := range metric.FindAllString(string(b), -1) {
			base := strings.TrimSuffix(strings.TrimSuffix(strings.TrimSuffix(name, "_bucket"), "_sum"), "_count")
			if _, ok := served[base]; !ok {
				t.Errorf("%s queries %s, which no service serves", f, name)
			}
		}
	}
}
