// Command executor: applies approved patches inside the confined workspace.
package main

import (
	"os"

	"github.com/picoclaw-suite/picoclaw/pkg/runner"
	"github.com/picoclaw-suite/picoclaw/services/executor/service"
)

func main() {
	// Shell and git commands run in a sandbox whose first process is this binary again.
	service.MaybeRunSandboxInit()
	os.Exit(runner.Serve("executor", service.DefaultConfig, service.Run, runner.Behind))
}
