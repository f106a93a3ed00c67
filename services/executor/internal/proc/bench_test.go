package proc

import (
	"context"
	"os"
	"sort"
	"testing"
	"time"

	"github.com/picoclaw-suite/picoclaw/services/executor/internal/sandbox"
)

func TestMain(m *testing.M) {
	sandbox.MaybeRunInit()
	os.Exit(m.Run())
}

// BenchmarkTrue measures what the sandbox adds to one command: `true` run directly (in its
// own process group) and in the sandbox (namespaces, mounts, Landlock, rlimits). The
// p50/p90 metrics are per command.
func BenchmarkTrue(b *testing.B) {
	ws := b.TempDir()
	sb := sandbox.DefaultConfig()
	none := sandbox.DefaultConfig()
	none.Mode = sandbox.ModeNone
	for _, bc := range []struct {
		name string
		cfg  *sandbox.Config
	}{{"direct", &none}, {"sandbox", &sb}} {
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
