package workspace

import (
	"fmt"
	"sort"
	"testing"
	"time"

	"github.com/picoclaw-suite/picoclaw/pkg/testinfra"
)

// BenchmarkViewPack5000 is the executor's side of a context pack on a 5,000-file repository:
// the tree, one search for the task's identifiers and three file reads, from the disk cache.
func BenchmarkViewPack5000(b *testing.B) {
	dir := b.TempDir()
	files := map[string]string{".gitignore": "*.tmp\nbuild/\n"}
	for i := range 5000 {
		files[fmt.Sprintf("pkg%02d/sub%02d/file%04d.go", i%50, (i/50)%10, i)] =
			fmt.Sprintf("package p%d\n\nfunc F%d() int { return %d }\n\n// helper%d does nothing.\nfunc helper%d() {}\n", i%50, i, i, i, i)
	}
	testinfra.WriteFiles(b, dir, files)
	w, err := Open(dir)
	if err != nil {
		b.Fatal(err)
	}
	defer w.Close()
	var times []time.Duration
	for b.Loop() {
		start := time.Now()
		tree, err := w.ListTree(TreeOptions{MaxEntries: 5000, MaxDepth: 64})
		if err != nil || len(tree.Entries) != 5000 {
			b.Fatalf("tree %d %v", len(tree.Entries), err)
		}
		res, err := w.Search(SearchOptions{Query: `\b(Sub|F42|helper43)\b`, Regexp: true, MaxMatches: 400})
		if err != nil || len(res.Matches) == 0 {
			b.Fatalf("search %v %v", res, err)
		}
		for _, m := range res.Matches[:min(3, len(res.Matches))] {
			if _, err := w.ReadFile(m.Path, ReadOptions{}); err != nil {
				b.Fatal(err)
			}
		}
		times = append(times, time.Since(start))
	}
	sort.Slice(times, func(i, j int) bool { return times[i] < times[j] })
	b.ReportMetric(float64(times[len(times)/2].Microseconds())/1000, "p50-ms")
}
