package service

import (
	"os"
	"testing"

	"github.com/picoclaw-suite/picoclaw/services/executor/internal/sandbox"
)

// TestMain lets this test binary act as the sandbox init for the commands it runs.
func TestMain(m *testing.M) {
	sandbox.MaybeRunInit()
	os.Exit(m.Run())
}
