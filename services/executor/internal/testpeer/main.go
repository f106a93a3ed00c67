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
