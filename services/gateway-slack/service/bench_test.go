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
	channeltest.PostAtRate(b, rate, func(i int) []byte {
		ts := fmt.Sprintf("1700001000.%06d", i)
		return fakeslack.EventBody(fmt.Sprintf("EvBench%08d", i), fakeslack.Mention(allowed, "CBENCH", ts, "", "ベンチマーク"))
	}, func(client *http.Client, body []byte) (int, error) {
		code, _, err := fakeslack.Do(client, fakeslack.Request{URL: h.URL + service.EventsPath, Secret: testSecret,
			Body: body, ContentType: "application/json"})
		return code, err
	})
}
