package calc

import (
	"errors"
	"testing"
)

func TestEvalDivByZero(t *testing.T) {
	if q, err := Div(1, 0); !errors.Is(err, ErrDivisionByZero) || q != 0 {
		t.Errorf("Div(1, 0) = %d, %v; want 0, ErrDivisionByZero", q, err)
	}
	if q, err := Div(9, 3); err != nil || q != 3 {
		t.Errorf("Div(9, 3) = %d, %v; want 3, nil", q, err)
	}
}
