// Command gateway-line: LINE webhook ingestion, Messaging API replies and pushes, approval buttons.
package main

import (
	"os"

	"github.com/picoclaw-suite/picoclaw/pkg/runner"
	"github.com/picoclaw-suite/picoclaw/services/gateway-line/service"
)

func main() {
	os.Exit(runner.Serve("gateway-line", service.DefaultConfig, service.Run))
}
