// Command picoclaw is the suite's command line: the embedded single-process default (`run`),
// a terminal chat, and the approval and status commands.
package main

import (
	"os"

	"github.com/picoclaw-suite/picoclaw/cmd/picoclaw/internal/cli"
)

func main() {
	os.Exit(cli.Main(os.Args[1:], cli.Std()))
}
