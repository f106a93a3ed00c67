// Command coder-order: proposal writers order1..3 (Aka, Ao, Gin) over the provider adapters.
package main

import (
	"os"

	"github.com/picoclaw-suite/picoclaw/pkg/runner"
	"github.com/picoclaw-suite/picoclaw/services/coder-order/service"
)

func main() {
	os.Exit(runner.Serve("coder-order", service.DefaultConfig, service.Run, runner.Behind))
}
