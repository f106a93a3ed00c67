package proc

import (
	"context"
	"os/exec"
	"path/filepath"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/picoclaw-suite/picoclaw/services/executor/internal/sandbox"
	"github.com/picoclaw-suite/picoclaw/services/executor/internal/testpeer"
)

// TestMain lets this test binary act as the sandbox init for the commands it runs.
func TestMain(m *testing.M) { testpeer.Main(m) }

// BenchmarkTrue measures what the sandbox adds to one command: `true` run directly (in its
// own process group) and in the sandbox (namespaces, mounts, Landlock, rlimits), with this
// test binary as the sandbox init and with a release build of the largest binary that runs
// the executor (`picoclaw`, the embedded suite), as users run it. The p50/p90 metrics are per
// command.
func BenchmarkTrue(b *testing.B) {
	ws := b.TempDir()
	sb := sandbox.DefaultConfig()
	none := sandbox.DefaultConfig()
	none.Mode = sandbox.ModeNone
	release := sandbox.DefaultConfig()
	release.InitBinary = buildSuiteBinary(b)
	for _, bc := range []struct {
		name string
		cfg  *sandbox.Config
	}{{"direct", &none}, {"sandbox", &sb}, {"sandbox-picoclaw-binary", &release}} {
		b.Run(bc.name, func(b *testing.B) {
			spec := Spec{Argv: []string{"true"}, Dir: ws, Env: []string{"PATH=/usr/bin:/bin"},
				Timeout: 10 * time.Second, Limit: 1024, Sandbox: bc.cfg, Workspace: ws}
			durs := make([]time.Duration, 0, b.N)
			for b.Loop() {
				start := time.Now()
				if _, err := Run(context.Background(), spec); err != nil {
					b.Fatal(err)
				}
				durs = append(durs, time.Since(start))
			}
			sort.Slice(durs, func(i, j int) bool { return durs[i] < durs[j] })
			if len(durs) > 0 {
				b.ReportMetric(float64(durs[len(durs)/2].Microseconds())/1000, "p50-ms")
				b.ReportMetric(float64(durs[len(durs)*9/10].Microseconds())/1000, "p90-ms")
			}
		})
	}
}

// buildSuiteBinary builds cmd/picoclaw as a release does (-trimpath, stripped) and returns
// its path.
func buildSuiteBinary(b *testing.B) string {
	b.Helper()
	out, err := exec.Command("go", "env", "GOWORK").Output()
	work := strings.TrimSpace(string(out))
	if err != nil || work == "" || work == "off" {
		b.Fatalf("go env GOWORK: %q %v: the benchmark builds cmd/picoclaw from the workspace", work, err)
	}
	bin := filepath.Join(b.TempDir(), "picoclaw")
	cmd := exec.Command("go", "build", "-trimpath", "-ldflags=-s -w", "-o", bin, "./cmd/picoclaw")
	cmd.Dir = filepath.Dir(work)
	if out, err := cmd.CombinedOutput(); err != nil {
		b.Fatalf("build picoclaw: %v\n%s", err, out)
	}
	return bin
}
