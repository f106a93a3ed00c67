package app

import (
	"testing"

	"github.com/picoclaw-suite/picoclaw/services/executor/internal/testpeer"
)

// TestMain lets this test binary act as the sandbox init for the commands it runs.
func TestMain(m *testing.M) { testpeer.Main(m) }
