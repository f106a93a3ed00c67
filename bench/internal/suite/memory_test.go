package suite

import (
	"os"
	"strings"
	"testing"
)

const statusSample = `Name:	picoclaw
Umask:	0022
State:	S (sleeping)
VmPeak:	 1952268 kB
VmHWM:	   94512 kB
VmRSS:	   85828 kB
RssAnon:	   12012 kB
RssFile:	   73816 kB
RssShmem:	       0 kB
Threads:	12
`

const rollupSample = `55e347bed000-7ffccd742000 ---p 00000000 00:00 0                          [rollup]
Rss:               85828 kB
Pss:               84300 kB
Pss_Dirty:         11900 kB
Pss_Anon:          11950 kB
Pss_File:          72350 kB
Pss_Shmem:             0 kB
Shared_Clean:       1600 kB
Shared_Dirty:          0 kB
Private_Clean:     72200 kB
Private_Dirty:     12028 kB
FilePmdMapped:     51200 kB
Swap:                  0 kB
`

func TestParseKBReadsStatusAndRollup(t *testing.T) {
	var m Memory
	if err := parseKB(strings.NewReader(statusSample), map[string]*int64{"VmRSS": &m.RSS, "RssAnon": &m.Anon, "RssFile": &m.File, "VmHWM": &m.Peak}); err != nil {
		t.Fatal(err)
	}
	if want := (Memory{RSS: 85828 << 10, Anon: 12012 << 10, File: 73816 << 10, Peak: 94512 << 10}); m != want {
		t.Fatalf("status: %+v, want %+v", m, want)
	}
	var pss, clean, dirty int64
	if err := parseKB(strings.NewReader(rollupSample), map[string]*int64{"Pss": &pss, "Private_Clean": &clean, "Private_Dirty": &dirty}); err != nil {
		t.Fatal(err)
	}
	if pss != 84300<<10 || clean+dirty != (72200+12028)<<10 {
		t.Fatalf("rollup: pss %d, private %d", pss, clean+dirty)
	}
}

func TestParseKBRefusesWhatItCannotRead(t *testing.T) {
	var n int64
	for name, in := range map[string]string{
		"missing field": "VmRSS:	 1 kB\n",
		"other unit":    "VmRSS:	 1 kB\nRssAnon:	1 MB\n",
		"not a number":  "VmRSS:	 1 kB\nRssAnon:	x kB\n",
	} {
		if err := parseKB(strings.NewReader(in), map[string]*int64{"VmRSS": &n, "RssAnon": &n}); err == nil {
			t.Errorf("%s: no error", name)
		}
	}
}

// The readers work on this very process: the kernel's files have the fields they need.
func TestReadMemoryOfThisProcess(t *testing.T) {
	m, err := ReadMemory(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	p, err := ReadProportional(os.Getpid())
	if err != nil {
		t.Fatal(err)
	}
	if m.RSS <= 0 || m.Anon+m.File > m.RSS || p.PSS <= 0 || p.USS <= 0 || p.USS > 2*m.Peak {
		t.Fatalf("memory %+v, proportional %+v", m, p)
	}
}

func TestParseGoRuntimeFromMetrics(t *testing.T) {
	text := `# HELP go_goroutines Number of goroutines that currently exist.
# TYPE go_goroutines gauge
go_goroutines 67
# TYPE go_memstats_heap_inuse_bytes gauge
go_memstats_heap_inuse_bytes 7.094272e+06
# TYPE go_memstats_heap_idle_bytes gauge
go_memstats_heap_idle_bytes 4.308992e+06
# TYPE go_memstats_heap_released_bytes gauge
go_memstats_heap_released_bytes 3.964928e+06
# TYPE go_memstats_stack_inuse_bytes gauge
go_memstats_stack_inuse_bytes 1.179648e+06
# TYPE go_memstats_sys_bytes gauge
go_memstats_sys_bytes 1.8454792e+07
# TYPE picoclaw_http_requests_total counter
picoclaw_http_requests_total{service="approval"} 3
`
	g, err := parseGoRuntime(strings.NewReader(text))
	if err != nil {
		t.Fatal(err)
	}
	want := GoRuntime{HeapInuse: 7094272, HeapIdle: 4308992, HeapReleased: 3964928, Stack: 1179648, Sys: 18454792, Goroutines: 67}
	if g != want || g.Held() != 18454792-3964928 {
		t.Fatalf("got %+v, want %+v", g, want)
	}
	if _, err := parseGoRuntime(strings.NewReader("go_goroutines 1\n")); err == nil {
		t.Fatal("metrics without the memstats gauges accepted")
	}
}
