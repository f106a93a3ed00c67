// Command router-shiro: route decision, loop control, worker model calls, delegation and deliberation.
package main

import (
	"os"

	"github.com/picoclaw-suite/picoclaw/pkg/runner"
	"github.com/picoclaw-suite/picoclaw/services/router-shiro/service"
)

func main() {
	os.Exit(runner.Serve("router-shiro", service.DefaultConfig, service.Run, runner.Behind))
}
