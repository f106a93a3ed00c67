package service_test

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/picoclaw-suite/picoclaw/pkg/channel/channeltest"
	"github.com/picoclaw-suite/picoclaw/pkg/testinfra/fakeslack"
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
		bodies[i] = fakeslack.EventBody(fmt.Sprintf("EvBench%08d", i), fakeslack.Mention(allowed, "CBENCH", ts, "", "ベンチマーク"))
	}
	channeltest.AtRate(b, rate, func(i int) error {
		code, _, err := fakeslack.Do(client, fakeslack.Request{URL: h.URL + service.EventsPath, Secret: testSecret,
			Body: bodies[i], ContentType: "application/json"})
		return channeltest.Status(code, err)
	})
}
