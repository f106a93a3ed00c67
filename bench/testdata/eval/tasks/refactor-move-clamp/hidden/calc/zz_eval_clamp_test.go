package calc

import "testing"

func TestEvalClamp(t *testing.T) {
	for _, c := range [][4]int{{-5, 0, 10, 0}, {0, 0, 10, 0}, {4, 0, 10, 4}, {10, 0, 10, 10}, {11, 0, 10, 10}} {
		if got := Clamp(c[0], c[1], c[2]); got != c[3] {
			t.Errorf("Clamp(%d, %d, %d) = %d, want %d", c[0], c[1], c[2], got, c[3])
		}
	}
}
