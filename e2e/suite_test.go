package e2e

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/picoclaw-suite/picoclaw/pkg/testinfra"
	"github.com/picoclaw-suite/picoclaw/pkg/testinfra/fakeline"
	"github.com/picoclaw-suite/picoclaw/pkg/testinfra/fakellm"
	"github.com/picoclaw-suite/picoclaw/pkg/testinfra/fakeslack"
	"github.com/picoclaw-suite/picoclaw/pkg/testinfra/launch"
)

// The suite's users: allowed to talk and listed as approvers on their channel.
const (
	lineUser  = "Ue2e0000000000000000000000000001"
	slackUser = "UE2EUSER1"
	cliUser   = "e2e"
)

type process struct {
	*launch.Proc
	name string
	spec launch.Spec
	logs *testinfra.SyncBuffer
}

// suite is the whole product running as separate processes against fakes of the outside world.
type suite struct {
	addrs     map[string]string
	procs     []*process
	otlp      *otlpReceiver
	line      *fakeline.Server
	slack     *fakeslack.Server
	openai    *fakellm.Server
	ollama    *fakellm.Server
	workspace string
	// redis is the suite's Redis (its key prefix is all the suite's state there); env and
	// root are what the processes were started with, for restart.
	redis    testinfra.RedisDB
	env      []string
	root     string
	stopOnce sync.Once
}

const suiteConfig = `timezone: Asia/Tokyo
locale: ja
log_level: info
line:
  allowed_users: [%[1]s]
slack:
  allowed_users: [%[2]s]
  bot_user_id: %[4]s
approval:
  approvers:
    line: [%[1]s]
    slack: [%[2]s]
    cli: [%[3]s]
  auto_approve:
    enabled: true
`

// startSuite starts the fakes, the OTLP receiver and the eight binaries, and waits until every
// one answers /healthz. extraEnv (KEY=value) overrides the suite's configuration.
func startSuite(t *testing.T, bin string, extraEnv ...string) *suite {
	t.Helper()
	s := &suite{otlp: startOTLP(t), line: startLINE(t), slack: startSlack(t), openai: startOpenAI(t), ollama: startOllama(t),
		workspace: t.TempDir()}
	cfgPath := filepath.Join(t.TempDir(), "picoclaw.yaml")
	if err := os.WriteFile(cfgPath, fmt.Appendf(nil, suiteConfig, lineUser, slackUser, cliUser, slackBotUser), 0o600); err != nil {
		t.Fatal(err)
	}
	addrs, env, rd := suiteEnv(t, s.workspace)
	s.addrs, s.redis = addrs, rd
	env = append(env,
		"PICOCLAW_CONFIG="+cfgPath,
		"OTEL_EXPORTER_OTLP_ENDPOINT=http://"+s.otlp.addr,
		"PICOCLAW_LINE_API_BASE_URL="+s.line.URL,
		"PICOCLAW_LINE_DATA_API_BASE_URL="+s.line.URL,
		"PICOCLAW_SLACK_FILES_BASE_URL="+s.slack.URL,
		"PICOCLAW_SLACK_API_BASE_URL="+s.slack.URL+"/api",
		// The agents talk to the fake Ollama (the last value of a key wins).
		"PICOCLAW_AGENTS_CHAT_PROVIDER=ollama",
		"PICOCLAW_AGENTS_WORKER_PROVIDER=ollama",
		"PICOCLAW_OLLAMA_BASE_URL="+s.ollama.URL,
		"PICOCLAW_ORDERS_ORDER2_BASE_URL="+s.openai.URL+"/v1",
		"OPENAI_API_KEY="+openAIKey,
		// order1 (DeepSeek) speaks the same protocol: /deliberate asks both.
		"PICOCLAW_ORDERS_ORDER1_BASE_URL="+s.openai.URL+"/v1",
		"DEEPSEEK_API_KEY="+openAIKey,
		"PICOCLAW_APPROVAL_TOKENS=e2e:"+approvalToken,
		// The services run at the tests' own priority: beside the compiler of other packages,
		// those behind the answer would otherwise wait for it (runner.Behind; the shipped
		// default is checked by TestEveryBinaryStartsAnswersHealthAndStopsOnSIGTERM).
		"PICOCLAW_NICE=0",
	)
	env = append(env, extraEnv...)
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	s.env, s.root = env, root
	t.Cleanup(func() {
		s.stop(t)
		if t.Failed() {
			s.dumpLogs(t)
		}
	})
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for _, name := range services {
		p := &process{name: name, logs: &testinfra.SyncBuffer{}}
		// The config names the persona and rules files relative to the repository.
		p.spec = launch.Spec{Name: name, BinDir: bin, Dir: root, Env: env, Addr: addrs[name], ReadyPath: "/healthz", Output: p.logs}
		lp, err := launch.Start(ctx, p.spec)
		if err != nil {
			t.Fatalf("%v\n%s", err, p.logs)
		}
		p.Proc = lp
		s.procs = append(s.procs, p)
	}
	return s
}

// proc is the named service's process.
func (s *suite) proc(t *testing.T, name string) *process {
	t.Helper()
	for _, p := range s.procs {
		if p.name == name {
			return p
		}
	}
	t.Fatalf("no service %s", name)
	return nil
}

// crash kills the named services with SIGKILL and waits until they are gone.
func (s *suite) crash(t *testing.T, names ...string) {
	t.Helper()
	for _, name := range names {
		p := s.proc(t, name)
		if err := p.Signal(syscall.SIGKILL); err != nil {
			t.Fatal(err)
		}
		<-p.Done()
	}
}

// restart starts the named services again as they were started, their output appended to
// their logs, and waits until each answers /healthz.
func (s *suite) restart(t *testing.T, names ...string) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	for _, name := range names {
		p := s.proc(t, name)
		lp, err := launch.Start(ctx, p.spec)
		if err != nil {
			t.Fatalf("restart %s: %v\n%s", name, err, p.logs)
		}
		p.Proc = lp
	}
}

// stop sends SIGTERM to every process (so each flushes its spans) and waits for them to end.
func (s *suite) stop(t *testing.T) {
	t.Helper()
	s.stopOnce.Do(func() {
		for _, p := range s.procs {
			_ = p.Signal(syscall.SIGTERM)
		}
		for _, p := range s.procs {
			if err := p.Stop(15 * time.Second); err != nil {
				t.Errorf("%s after SIGTERM: %v", p.name, err)
			}
		}
	})
}

func (s *suite) dumpLogs(t *testing.T) {
	t.Helper()
	for _, p := range s.procs {
		out := p.logs.String()
		if len(out) > 12000 {
			out = "…" + out[len(out)-12000:]
		}
		t.Logf("--- %s log ---\n%s", p.name, out)
	}
}

func (s *suite) url(service, path string) string { return "http://" + s.addrs[service] + path }

// publicURL is a path on a service's public listener (webhooks, REST, console).
func (s *suite) publicURL(service, path string) string {
	return "http://" + s.addrs[service+"-public"] + path
}

// post sends body to url with the given headers and expects 200.
func post(t *testing.T, url, contentType string, body []byte, headers map[string]string) []byte {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewReader(body))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", contentType)
	for k, v := range headers {
		req.Header.Set(k, v)
	}
	return do(t, req)
}

func do(t *testing.T, req *http.Request) []byte {
	t.Helper()
	// Bounded: a hung service fails the test instead of the whole run.
	client := &http.Client{Timeout: flowTimeout}
	res, err := client.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	out, _ := io.ReadAll(res.Body)
	if res.StatusCode != http.StatusOK {
		t.Fatalf("%s %s: %s %s", req.Method, req.URL, res.Status, out)
	}
	return out
}

// approvalAPI calls the approval REST API with the e2e token.
func (s *suite) approvalAPI(t *testing.T, method, path string, body any, out any) {
	t.Helper()
	var rd io.Reader
	if body != nil {
		b, err := json.Marshal(body)
		if err != nil {
			t.Fatal(err)
		}
		rd = bytes.NewReader(b)
	}
	req, err := http.NewRequest(method, s.publicURL("approval", path), rd)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+approvalToken)
	req.Header.Set("Content-Type", "application/json")
	if err := json.Unmarshal(do(t, req), out); err != nil {
		t.Fatalf("%s %s: %v", method, path, err)
	}
}

type auditLog struct {
	JobID      string `json:"job_id"`
	ChainValid bool   `json:"chain_valid"`
	Events     []struct {
		Type string `json:"type"`
		Seq  int64  `json:"seq"`
	} `json:"events"`
}

func (a auditLog) types() []string {
	var out []string
	for _, e := range a.Events {
		out = append(out, e.Type)
	}
	return out
}

// assertAudit checks that the job's audit log is exactly the expected chain and verifies.
func (s *suite) assertAudit(t *testing.T, job string, want ...string) {
	t.Helper()
	var log auditLog
	s.approvalAPI(t, http.MethodGet, "/v1/jobs/"+job+"/events", nil, &log)
	if got := strings.Join(log.types(), ","); got != strings.Join(want, ",") {
		t.Errorf("audit chain of %s = %s, want %s", job, got, strings.Join(want, ","))
	}
	if !log.ChainValid {
		t.Errorf("audit chain of %s does not verify", job)
	}
}

// assertFile waits for the executor's change to be in the workspace.
func (s *suite) assertFile(t *testing.T, rel, want string) {
	t.Helper()
	got, err := os.ReadFile(filepath.Join(s.workspace, rel))
	if err != nil {
		t.Fatalf("workspace: %v", err)
	}
	if string(got) != want {
		t.Fatalf("%s = %q, want %q", rel, got, want)
	}
}

// assertOneTrace stops the suite (flushing every exporter) and checks that the job ran in one
// trace that crosses want, with job_id = job on every span of it, and that the trace holds at
// least minSpans["service/span name"] of the named spans.
func (s *suite) assertOneTrace(t *testing.T, job string, want []string, minSpans map[string]int) {
	t.Helper()
	s.stop(t)
	traces := map[string]bool{}
	for _, sp := range s.otlp.Spans() {
		// A REST request about the job (the test reading it) is its caller's trace; the spans
		// of what it does to the job join the job's (checked by jobtrace_test.go).
		if sp.JobID == job && !restSpan(sp) {
			traces[sp.TraceID] = true
		}
	}
	if len(traces) != 1 {
		for _, sp := range s.otlp.Spans() {
			if sp.JobID == job {
				t.Logf("trace %s: %s/%s (parent %s)", sp.TraceID, sp.Service, sp.Name, sp.ParentID)
			}
		}
		t.Fatalf("job %s spans are in %d traces, want 1", job, len(traces))
	}
	var trace string
	for id := range traces {
		trace = id
	}
	seen := map[string]int{}
	names := map[string]int{}
	for _, sp := range s.otlp.Spans() {
		if sp.TraceID != trace {
			continue
		}
		seen[sp.Service]++
		names[sp.Service+"/"+sp.Name]++
		if sp.JobID != job {
			t.Errorf("span %s/%s in the job's trace has job_id %q", sp.Service, sp.Name, sp.JobID)
		}
	}
	for _, svc := range want {
		if seen[svc] == 0 {
			t.Errorf("trace %s has no span of %s (spans per service: %v)", trace, svc, seen)
		}
	}
	for name, n := range minSpans {
		if names[name] < n {
			t.Errorf("trace %s has %d spans %s, want at least %d", trace, names[name], name, n)
		}
	}
	t.Logf("trace %s: spans per service %v", trace, seen)
	if t.Failed() {
		t.Logf("span names: %v", names)
	}
}

// noProblems fails on protocol problems any fake saw.
func (s *suite) noProblems(t *testing.T) {
	t.Helper()
	for name, problems := range map[string]func() []string{"LINE": s.line.Problems, "Slack": s.slack.Problems,
		"OpenAI": s.openai.Problems, "Ollama": s.ollama.Problems} {
		if p := problems(); len(p) > 0 {
			t.Errorf("%s fake saw problems: %v", name, p)
		}
	}
}
