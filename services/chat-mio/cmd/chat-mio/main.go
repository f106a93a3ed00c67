// Command chat-mio: sessions, JobID allocation, commands, the approval conversation and the final reply.
package main

import (
	"os"

	"github.com/picoclaw-suite/picoclaw/pkg/runner"
	"github.com/picoclaw-suite/picoclaw/services/chat-mio/service"
)

func main() {
	os.Exit(runner.Serve("chat-mio", service.DefaultConfig, service.Run, runner.Behind))
}
