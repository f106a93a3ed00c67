package service

import (
	"context"
	"fmt"
	"sort"
	"testing"
	"time"

	executorv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/executor/v1"
	"github.com/picoclaw-suite/picoclaw/pkg/svcauth"
	"github.com/picoclaw-suite/picoclaw/pkg/testinfra"
)

// BenchmarkContextPackViewRPC5000 is the executor's side of one context pack for a 5,000-file
// repository as coder-order asks for it, over the real service (Connect, authentication,
// one log line per read): the tree and the search for the task's identifiers in one walk, and
// three file reads. coder-order's own side is BenchmarkContextPack5000 there.
func BenchmarkContextPackViewRPC5000(b *testing.B) {
	s := start(b, nil)
	files := map[string]string{".gitignore": "*.tmp\nbuild/\n"}
	for i := range 5000 {
		files[fmt.Sprintf("pkg%02d/sub%02d/file%04d.go", i%50, (i/50)%10, i)] =
			fmt.Sprintf("package p%d\n\nfunc F%d() int { return %d }\n\n// helper%d does nothing.\nfunc helper%d() {}\n", i%50, i, i, i, i)
	}
	testinfra.WriteFiles(b, s.ws, files)
	c := viewClient(b, s, svcauth.CoderOrder)
	ctx := context.Background()
	const job = "job_20260101_301"
	var times []time.Duration
	for b.Loop() {
		start := time.Now()
		// As coder-order asks: the tree and the search for the task's identifiers in one walk.
		tree, err := c.ListTree(ctx, &executorv1.ListTreeRequest{JobId: job, MaxEntries: 5000, MaxDepth: 64,
			Search: &executorv1.SearchRequest{Query: `\b(Sub|F42|helper43)\b`, Regexp: true, MaxMatches: 400}})
		if err != nil || len(tree.GetEntries()) < 5000 {
			b.Fatalf("tree %d %v", len(tree.GetEntries()), err)
		}
		res := tree.GetSearch()
		if len(res.GetMatches()) == 0 {
			b.Fatalf("search %v", res)
		}
		for _, m := range res.GetMatches()[:min(3, len(res.GetMatches()))] {
			if _, err := c.ReadFile(ctx, &executorv1.ReadFileRequest{JobId: job, Path: m.GetPath()}); err != nil {
				b.Fatal(err)
			}
		}
		times = append(times, time.Since(start))
	}
	sort.Slice(times, func(i, j int) bool { return times[i] < times[j] })
	b.ReportMetric(float64(times[len(times)/2].Microseconds())/1000, "p50-ms")
}
