package fakellm

import (
	"testing"

	"github.com/openai/openai-go/v3"
)

// The fake is driven by the vendor's SDK in its tests.
func TestWire(t *testing.T) {
	if Wire != openai.Name {
		t.Fatal(Wire)
	}
}
