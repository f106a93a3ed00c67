package service

import (
	"context"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	approvalv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/approval/v1"
	executorv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/executor/v1"
	"github.com/picoclaw-suite/picoclaw/pkg/testinfra"
	"github.com/picoclaw-suite/picoclaw/pkg/testinfra/fakemcp"
	"github.com/picoclaw-suite/picoclaw/services/approval/approvaltest"
	"github.com/picoclaw-suite/picoclaw/services/executor/internal/app"
	"github.com/picoclaw-suite/picoclaw/services/executor/internal/domain"
	"github.com/picoclaw-suite/picoclaw/services/executor/internal/journal"
	"github.com/picoclaw-suite/picoclaw/services/executor/internal/workspace"
)

// claimLease is the shortest lease approval accepts: what a dead executor's job waits before it
// is taken over.
const claimLease = 3 * time.Second

// replicas are two executors sharing one workspace and state directory, and one approval.
type replicas struct {
	appr      *approvaltest.Server
	ws, state string
	a, b      *suite
	bridge    *fakemcp.Server
}

func startReplicas(t *testing.T) *replicas {
	t.Helper()
	appr := approvaltest.Start(t, approvaltest.WithApprovers("line", owner.GetId()), approvaltest.WithClaimLease(claimLease))
	dir := t.TempDir()
	r := &replicas{appr: appr, ws: filepath.Join(dir, "ws"), state: filepath.Join(dir, "state"), bridge: startBridge(t)}
	if err := os.Mkdir(r.ws, 0o755); err != nil {
		t.Fatal(err)
	}
	setup := func(c *Config) {
		c.Executor.TakeoverInterval = 100 * time.Millisecond
		c.Executor.MCP.ChromeBridgeURL, c.Executor.MCP.Timeout = r.bridge.URL(), time.Minute
		c.Executor.Browser.ArtifactsDir = filepath.Join(dir, "artifacts")
	}
	r.a = startOn(t, appr, r.ws, r.state, setup, nil)
	r.b = startOn(t, appr, r.ws, r.state, setup, nil)
	return r
}

func (r *replicas) write(t *testing.T, name, content string) {
	t.Helper()
	testinfra.WriteFiles(t, r.ws, map[string]string{name: content})
}

func (r *replicas) read(t *testing.T, name string) string {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(r.ws, name))
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// Two executors asked to run the same job at once: one claims and runs it, the other is
// refused and reports nothing — it cannot fail the job its peer is running.
func TestTwoExecutorsRaceForOneJob(t *testing.T) {
	r := startReplicas(t)
	r.write(t, "notes/log.txt", "start\n")
	id := "job_20260101_201"
	r.a.addJob(t, id, jsonPatch(t, cmd("file_edit", "append", "notes/log.txt", "entry\n")), approvalv1.JobStatus_JOB_STATUS_GRANTED)
	var wg sync.WaitGroup
	errs := make([]error, 2)
	for i, s := range []*suite{r.a, r.b} {
		wg.Go(func() {
			_, errs[i] = s.client.Execute(context.Background(), &executorv1.ExecuteRequest{JobId: id})
		})
	}
	wg.Wait()
	won := 0
	for _, err := range errs {
		if err == nil {
			won++
		} else if !strings.Contains(err.Error(), "already claimed") {
			t.Errorf("the loser's error = %v", err)
		}
	}
	if won != 1 {
		t.Fatalf("%d executors ran the job: %v", won, errs)
	}
	if got := r.read(t, "notes/log.txt"); got != "start\nentry\n" {
		t.Fatalf("log = %q", got)
	}
	if st := r.a.job(t, id).GetStatus(); st != approvalv1.JobStatus_JOB_STATUS_COMPLETED {
		t.Fatalf("status %v", st)
	}
	types := eventTypes(r.a.events(t, id))
	for typ, n := range map[string]int{"claimed": 1, "claim_rejected": 1, "report_rejected": 0, "execution_refused": 0, "execution_completed": 1} {
		if got := count(types, typ); got != n {
			t.Errorf("%d %s events, want %d: %v", got, typ, n, types)
		}
	}
}

func count(ss []string, s string) int {
	n := 0
	for _, x := range ss {
		if x == s {
			n++
		}
	}
	return n
}

// A job running longer than the claim's lease keeps its claim (the executor renews it), so the
// other executor, looking for lapsed claims all the while, never takes it over.
func TestLongJobKeepsItsClaim(t *testing.T) {
	r := startReplicas(t)
	release := make(chan struct{})
	r.bridge.Handle("chrome_get_web_content", func(map[string]any) *mcp.CallToolResult {
		<-release
		return fakemcp.Text("Example Domain")
	})
	id := "job_20260101_202"
	r.a.addJob(t, id, jsonPatch(t, cmd("browser", "chrome_get_text", "h1", "")), approvalv1.JobStatus_JOB_STATUS_GRANTED)
	done := make(chan error, 1)
	go func() {
		_, err := r.a.client.Execute(context.Background(), &executorv1.ExecuteRequest{JobId: id})
		done <- err
	}()
	// Half again as long as the lease passes while the job runs.
	time.Sleep(claimLease * 3 / 2)
	close(release)
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	types := eventTypes(r.a.events(t, id))
	if count(types, "claim_renewed") == 0 || count(types, "claim_lapsed") != 0 || count(types, "claimed") != 1 ||
		count(types, "execution_completed") != 1 {
		t.Fatalf("events %v", types)
	}
}

// dead claims a job as an executor that then stops for good, after doing what do does.
func (r *replicas) dead(t *testing.T, id, text string, do func(c *approvalv1.ClaimJobResponse)) {
	t.Helper()
	r.a.addJob(t, id, text, approvalv1.JobStatus_JOB_STATUS_GRANTED)
	c, err := r.appr.Client.ClaimJob(context.Background(), &approvalv1.ClaimJobRequest{JobId: id, ExecutorId: "executor@dead"})
	if err != nil {
		t.Fatal(err)
	}
	do(c)
}

// record writes the journal record the dead executor would have written.
func (r *replicas) record(t *testing.T, rec app.JobRecord) {
	t.Helper()
	j, err := journal.Open(r.state)
	if err != nil {
		t.Fatal(err)
	}
	rec.Holder, rec.At = "executor@dead", time.Now().UTC()
	if err := j.Write(rec); err != nil {
		t.Fatal(err)
	}
}

func (r *replicas) snapshot(t *testing.T, names ...string) []byte {
	t.Helper()
	w, err := workspace.Open(r.ws)
	if err != nil {
		t.Fatal(err)
	}
	defer w.Close()
	s, err := w.Snapshot(names)
	if err != nil {
		t.Fatal(err)
	}
	data, err := s.Encode()
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// An executor that dies holding claims leaves its jobs executing only until their lease runs
// out: the other executor takes them over and finishes each from the journal. A job that was
// done is reported, not applied again; a job of file operations that stopped midway is rolled
// back and run once; a job with a command that stopped midway is rolled back and failed, its
// command never run twice.
func TestJobsOfADeadExecutorAreTakenOver(t *testing.T) {
	r := startReplicas(t)
	r.write(t, "done.txt", "start\n")
	r.write(t, "midway.txt", "a\n")
	r.write(t, "shell.txt", "x\n")

	done, midway, shell := "job_20260101_211", "job_20260101_212", "job_20260101_213"
	// Done: applied, recorded, but the report never made it.
	r.dead(t, done, jsonPatch(t, cmd("file_edit", "append", "done.txt", "entry\n")), func(c *approvalv1.ClaimJobResponse) {
		r.write(t, "done.txt", "start\nentry\n")
		r.record(t, app.JobRecord{JobID: done, ContentHash: c.GetContentHash(), Phase: app.PhaseDone, FilesOnly: true,
			Result: &domain.Result{JobID: done, Success: true, Executed: 1, Succeeded: 1}})
	})
	// Midway: recorded as started, applied, then the process died.
	r.dead(t, midway, jsonPatch(t, cmd("file_edit", "append", "midway.txt", "b\n")), func(c *approvalv1.ClaimJobResponse) {
		r.record(t, app.JobRecord{JobID: midway, ContentHash: c.GetContentHash(), Phase: app.PhaseStarted, FilesOnly: true,
			Snapshot: r.snapshot(t, "midway.txt")})
		r.write(t, "midway.txt", "a\nb\n")
	})
	// Midway with a command: the command may have acted; it must not run again.
	r.dead(t, shell, jsonPatch(t, cmd("file_edit", "append", "shell.txt", "y\n"), cmd("shell_command", "run", "echo again >> ran.txt", "")),
		func(c *approvalv1.ClaimJobResponse) {
			r.record(t, app.JobRecord{JobID: shell, ContentHash: c.GetContentHash(), Phase: app.PhaseStarted,
				Snapshot: r.snapshot(t, "shell.txt")})
			r.write(t, "shell.txt", "x\ny\n")
		})

	final := func(id string) bool {
		st := r.a.job(t, id).GetStatus()
		return st == approvalv1.JobStatus_JOB_STATUS_COMPLETED || st == approvalv1.JobStatus_JOB_STATUS_FAILED
	}
	testinfra.Eventually(t, 30*time.Second, "the dead executor's jobs taken over", func() bool {
		return final(done) && final(midway) && final(shell)
	})

	if got := r.read(t, "done.txt"); got != "start\nentry\n" {
		t.Errorf("done.txt = %q: applied again", got)
	}
	if got := r.read(t, "midway.txt"); got != "a\nb\n" {
		t.Errorf("midway.txt = %q, want one application", got)
	}
	if got := r.read(t, "shell.txt"); got != "x\n" {
		t.Errorf("shell.txt = %q, want rolled back", got)
	}
	if _, err := os.Stat(filepath.Join(r.ws, "ran.txt")); err == nil {
		t.Error("the command of the interrupted job ran again")
	}
	for id, want := range map[string]approvalv1.JobStatus{done: approvalv1.JobStatus_JOB_STATUS_COMPLETED,
		midway: approvalv1.JobStatus_JOB_STATUS_COMPLETED, shell: approvalv1.JobStatus_JOB_STATUS_FAILED} {
		j := r.a.job(t, id)
		if j.GetStatus() != want {
			t.Errorf("%s: %v, want %v", id, j.GetStatus(), want)
		}
		types := eventTypes(r.a.events(t, id))
		if count(types, "claim_lapsed") != 1 || count(types, "claimed") != 2 {
			t.Errorf("%s: events %v", id, types)
		}
		// The done job was not started again; the midway one was.
		if started := count(types, "execution_started"); (id == midway) != (started == 1) {
			t.Errorf("%s: %d execution_started events: %v", id, started, types)
		}
	}
	failed := slices.IndexFunc(r.a.events(t, shell), func(e *approvalv1.JobEvent) bool {
		return e.GetType() == "execution_failed" && strings.Contains(e.GetPayloadJson(), "not run twice")
	})
	if failed < 0 {
		t.Errorf("%s failed without saying its command is not run twice: %v", shell, eventTypes(r.a.events(t, shell)))
	}
	// Every record was removed once approval had the outcome.
	left, err := os.ReadDir(filepath.Join(r.state, "jobs"))
	if err != nil || slices.ContainsFunc(left, func(e os.DirEntry) bool { return !strings.HasPrefix(e.Name(), ".") }) {
		t.Errorf("journal left: %v, %v", left, err)
	}
}
