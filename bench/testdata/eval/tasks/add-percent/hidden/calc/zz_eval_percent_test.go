package calc

import (
	"errors"
	"testing"
)

func TestEvalPercent(t *testing.T) {
	for _, c := range []struct{ part, whole, want float64 }{{1, 4, 25}, {3, 2, 150}, {0, 5, 0}, {-1, 8, -12.5}} {
		if got, err := Percent(c.part, c.whole); err != nil || got != c.want {
			t.Errorf("Percent(%v, %v) = %v, %v; want %v, nil", c.part, c.whole, got, err, c.want)
		}
	}
	if _, err := Percent(1, 0); !errors.Is(err, ErrDivisionByZero) {
		t.Errorf("Percent(1, 0) error = %v, want ErrDivisionByZero", err)
	}
}
