package service_test

import (
	"fmt"
	"net/http"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/picoclaw-suite/picoclaw/services/gateway-slack/internal/slacktest"
	"github.com/picoclaw-suite/picoclaw/services/gateway-slack/service"
)

// BenchmarkEventsAtRate sends signed Events API requests to the running gateway at a fixed
// 500 requests/s (open loop) and reports latency percentiles of verify + dedupe + persist + 200.
//
//	go test -run '^$' -bench EventsAtRate -benchtime 5000x ./services/gateway-slack/service/
func BenchmarkEventsAtRate(b *testing.B) {
	const rate = 500
	h := start(b, func(c *service.Config) { c.LogLevel = "warn" })
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: 256}}
	bodies := make([][]byte, b.N)
	for i := range bodies {
		ts := fmt.Sprintf("1700001000.%06d", i)
		bodies[i] = slacktest.EventBody(fmt.Sprintf("EvBench%08d", i), slacktest.Mention(allowed, "CBENCH", ts, "", "ベンチマーク"))
	}
	lat := make([]time.Duration, b.N)
	var failed sync.Map
	var wg sync.WaitGroup
	tick := time.NewTicker(time.Second / rate)
	defer tick.Stop()
	b.ResetTimer()
	for i := range b.N {
		<-tick.C
		wg.Go(func() {
			t0 := time.Now()
			code, _, err := slacktest.Do(client, slacktest.Request{URL: h.url + service.EventsPath, Secret: testSecret,
				Body: bodies[i], ContentType: "application/json"})
			lat[i] = time.Since(t0)
			if err != nil || code != http.StatusOK {
				failed.Store(i, fmt.Sprint(code, err))
			}
		})
	}
	wg.Wait()
	b.StopTimer()
	failed.Range(func(k, v any) bool {
		b.Fatalf("request %v: %v", k, v)
		return false
	})
	slices.Sort(lat)
	pct := func(p float64) float64 {
		return float64(lat[min(len(lat)-1, int(float64(len(lat))*p))].Microseconds()) / 1000
	}
	b.ReportMetric(pct(0.50), "p50_ms")
	b.ReportMetric(pct(0.99), "p99_ms")
	b.ReportMetric(float64(lat[len(lat)-1].Microseconds())/1000, "max_ms")
}
