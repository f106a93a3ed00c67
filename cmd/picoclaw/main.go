// Command picoclaw is the suite's command line: the embedded single-process default (`run`),
// a terminal chat, and the approval and status commands.
package main

import (
	"os"

	"github.com/picoclaw-suite/picoclaw/cmd/picoclaw/internal/cli"
	executor "github.com/picoclaw-suite/picoclaw/services/executor/service"
)

func main() {
	// The embedded executor runs shell and git in a sandbox whose first process is this binary
	// again; that process must become the sandbox init before anything else happens.
	executor.MaybeRunSandboxInit()
	os.Exit(cli.Main(os.Args[1:], cli.Std()))
}
