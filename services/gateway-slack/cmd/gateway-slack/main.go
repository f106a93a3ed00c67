// Command gateway-slack: Slack Events API and interactivity ingestion, chat.postMessage replies and pushes.
package main

import (
	"os"

	"github.com/picoclaw-suite/picoclaw/pkg/runner"
	"github.com/picoclaw-suite/picoclaw/services/gateway-slack/service"
)

func main() {
	os.Exit(runner.Serve("gateway-slack", service.DefaultConfig, service.Run))
}
