package service

import (
	"context"
	"path/filepath"
	"testing"

	commonv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/common/v1"
	routerv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/router/v1"
	"github.com/picoclaw-suite/picoclaw/pkg/testinfra/fakellm"
)

// analyze is a message the rule dictionary routes to ANALYZE: the worker model runs.
func analyze(t *testing.T, st *stack, id string) *routerv1.ProcessTaskResponse {
	t.Helper()
	res, err := st.router.ProcessTask(context.Background(), &routerv1.ProcessTaskRequest{
		JobId: id, SessionId: "line:U1", Channel: "line", Text: "このログを集計して傾向を教えて"})
	if err != nil {
		t.Fatal(err)
	}
	return res
}

func TestMissingWorkerModelRestartsOllamaOnceAndAnswers(t *testing.T) {
	file := filepath.Join(t.TempDir(), "restart")
	o := fakellm.Start(t, fakellm.Ollama, fakellm.Reply(workerJSON(false, "low")), fakellm.WithModels("worker-v1:latest"), fakellm.WithRestartFile(file))
	o.MissingUntilRestart("worker-v1:latest")
	st := startStackOn(t, o, func(c *Config) {
		c.Loop.Tools.MaxCalls = 0
		c.Ollama.RestartCommand = []string{"touch", file}
	})
	if ev := st.logs.Events("llm.model_unavailable"); len(ev) != 1 || ev[0]["fix"] != "picoclaw models setup" || ev[0]["model"] != "worker-v1:latest" {
		t.Errorf("start-up check logged %v", ev)
	}
	res := analyze(t, st, "job_20261128_001")
	if res.GetStopReason() != routerv1.StopReason_STOP_REASON_DONE || len(res.GetWorkerOutputs()) != 1 || res.GetFinalRoute() != commonv1.Route_ROUTE_ANALYZE {
		t.Fatalf("response %v", res)
	}
	if o.Restarts() != 1 || len(st.logs.Events("llm.ollama_restart")) != 1 {
		t.Errorf("restarts %d, logged %v", o.Restarts(), st.logs.Events("llm.ollama_restart"))
	}
}

func TestWorkerModelStillMissingIsReportedNotRestartedAgain(t *testing.T) {
	file := filepath.Join(t.TempDir(), "restart")
	o := fakellm.Start(t, fakellm.Ollama, fakellm.Reply(workerJSON(false, "low")), fakellm.WithModels(), fakellm.WithRestartFile(file))
	st := startStackOn(t, o, func(c *Config) {
		c.Loop.Tools.MaxCalls = 0
		c.Ollama.RestartCommand = []string{"touch", file}
	})
	for _, id := range []string{"job_20261128_002", "job_20261128_003"} {
		res := analyze(t, st, id)
		if res.GetStopReason() != routerv1.StopReason_STOP_REASON_WORKER_FAILURE || res.GetErrorReason() != "model_unavailable:missing:worker-v1:latest" {
			t.Fatalf("%s: response %v", id, res)
		}
	}
	if o.Restarts() != 1 {
		t.Errorf("restarts = %d, want one (then the cool-down)", o.Restarts())
	}
	// Shiro stays ready: it has to answer so the user learns what to run.
	if ev := st.logs.Events("llm.model_unavailable"); len(ev) != 1 {
		t.Errorf("start-up check logged %v", ev)
	}
}
