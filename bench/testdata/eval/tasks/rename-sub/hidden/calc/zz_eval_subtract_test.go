package calc

import "testing"

func TestEvalSubtract(t *testing.T) {
	if got := Subtract(10, 4); got != 6 {
		t.Errorf("Subtract(10, 4) = %d, want 6", got)
	}
}
