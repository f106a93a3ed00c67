// Command heartbeat: liveness of every service and agent, the aggregated report and alerts.
package main

import (
	"os"

	"github.com/picoclaw-suite/picoclaw/pkg/runner"
	"github.com/picoclaw-suite/picoclaw/services/heartbeat/service"
)

func main() {
	os.Exit(runner.Serve("heartbeat", service.DefaultConfig, service.Run))
}
