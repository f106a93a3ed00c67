package main

import (
	"context"
	"fmt"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/picoclaw-suite/picoclaw/bench/internal/report"
	"github.com/picoclaw-suite/picoclaw/bench/internal/suite"
)

// compareServices runs the separate services built at refDir (A) and at root (B) in turn, a whole
// run of each per round (the phases as the flags set them, each build on its own schema and
// Redis prefix), and writes compare-services.{json,md} with each figure's median per build and
// the ratios B / A. Each run's own report and logs stay under <out>/compare-services/.
func compareServices(ctx context.Context, o options, root, refDir string) error {
	co := o.compare
	cmp := &report.ServicesComparison{StartedAt: time.Now().UTC(), CPUs: runtime.NumCPU(), LoadBefore: loadAvg(), Rounds: co.rounds,
		Phases: servicesPhases(o),
		A:      &report.ServicesSide{Commit: suite.GitCommit(refDir), Env: splitEnv(co.envA)},
		B:      &report.ServicesSide{Commit: suite.GitCommit(root), Env: splitEnv(co.envB)}}
	sides := []struct {
		side *report.ServicesSide
		root string
	}{{cmp.A, refDir}, {cmp.B, root}}
	for r := range co.rounds {
		// A then B in odd rounds, B then A in even ones, as the embedded comparison does.
		order := []int{0, 1}
		if r%2 == 1 {
			order = []int{1, 0}
		}
		for _, i := range order {
			side := sides[i]
			name := fmt.Sprintf("r%d%c", r+1, 'a'+i)
			logf("round %d, build %c (%s)", r+1, 'A'+i, side.side.Commit)
			run := o
			run.out = filepath.Join(o.out, "compare-services", name)
			run.extraEnv = strings.Join(append(splitEnv(o.extraEnv), side.side.Env...), ",")
			rep := newReport(side.root)
			if err := measureServices(ctx, run, side.root, rep); err != nil {
				return fmt.Errorf("round %d, build %c: %w", r+1, 'A'+i, err)
			}
			complete(rep)
			if err := rep.WriteAs(run.out, "report"); err != nil {
				return err
			}
			s := report.SampleOf(rep)
			logf("%s: %.0f msg/s, %.3f ms CPU/msg in the services (+ %.3f Redis, %.3f load tool), ack p99 %.2f ms", name,
				s.MsgPerSec, s.CPUPerMsgMS, s.RedisCPUPerMsgMS, s.ToolCPUPerMsgMS, s.AckP99MS)
			side.side.Samples = append(side.side.Samples, s)
		}
	}
	cmp.LoadAfter = loadAvg()
	cmp.DurationSec = time.Since(cmp.StartedAt).Round(time.Second).Seconds()
	return publish(o.out, "compare-services", cmp, cmp.Markdown)
}

// servicesPhases says what one run does, for the comparison's report.
func servicesPhases(o options) string {
	p := []string{fmt.Sprintf("%d CHAT round trips one at a time", o.chat)}
	if o.slowChat > 0 {
		p = append(p, fmt.Sprintf("%d with a model of %s", o.slowChat, o.modelLatency))
	}
	p = append(p, fmt.Sprintf("webhooks at %.0f req/s for %s with the pipeline running and for %s on the ack path only", o.rate, o.webhook, o.webhook/2),
		fmt.Sprintf("%s sustained with %d in flight", o.sustain, o.inFlight), fmt.Sprintf("%d approvals", o.approvals))
	return strings.Join(p, ", ")
}
