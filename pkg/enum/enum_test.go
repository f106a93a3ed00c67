package enum

import "testing"

type color string

type wireColor int32

const (
	wireUnspecified wireColor = iota
	wireRed
	wireBlue
)

func TestMap(t *testing.T) {
	pairs := map[color]wireColor{"red": wireRed, "blue": wireBlue}
	m := New(pairs)
	pairs["green"] = 7 // the table keeps its own copy
	tests := []struct {
		d color
		w wireColor
	}{{"red", wireRed}, {"blue", wireBlue}}
	for _, tt := range tests {
		if got := m.Wire(tt.d); got != tt.w {
			t.Errorf("Wire(%q) = %d, want %d", tt.d, got, tt.w)
		}
		if got := m.Domain(tt.w); got != tt.d {
			t.Errorf("Domain(%d) = %q, want %q", tt.w, got, tt.d)
		}
		if got, ok := m.Lookup(tt.w); !ok || got != tt.d {
			t.Errorf("Lookup(%d) = %q, %v", tt.w, got, ok)
		}
	}
	if got := m.Wire("green"); got != wireUnspecified {
		t.Errorf("unknown domain value maps to %d, want the zero value", got)
	}
	if got := m.Domain(wireUnspecified); got != "" {
		t.Errorf("unknown wire value maps to %q, want the zero value", got)
	}
	if _, ok := m.Lookup(7); ok {
		t.Error("Lookup of a value outside the table reported it held")
	}
}
