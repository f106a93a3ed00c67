// Package testpeer holds test helpers of the executor that stand for things outside it: process
// inspection through /proc and the sandbox init for TestMain. The MCP Chrome bridge of the
// tests is pkg/testinfra/fakemcp; approval is never faked here: tests run the real service
// (services/approval/approvaltest).
package testpeer

import (
	"os"
	"testing"

	"github.com/picoclaw-suite/picoclaw/services/executor/internal/sandbox"
)

// Main is the TestMain of packages whose tests run commands in the sandbox: the test binary
// acts as the sandbox init when it is started as one, and runs the tests otherwise.
func Main(m *testing.M) {
	sandbox.MaybeRunInit()
	os.Exit(m.Run())
}
