package suite

import (
	"os"
	"testing"
	"time"
)

func TestParseStatCPU(t *testing.T) {
	tests := []struct {
		name, stat string
		want       time.Duration
		ok         bool
	}{
		{"plain", "42 (chat-mio) S 1 42 42 0 -1 4194560 1 0 0 0 150 25 0 0 20 0 9 0 1 1 1", 1750 * time.Millisecond, true},
		{"name with spaces and parens", "7 (a) b (c) R 1 7 7 0 -1 0 0 0 0 0 3 4 0 0", 70 * time.Millisecond, true},
		{"truncated", "7 (a) R 1 7", 0, false},
		{"no name", "garbage", 0, false},
	}
	for _, tt := range tests {
		got, err := parseStatCPU(1, []byte(tt.stat))
		if (err == nil) != tt.ok || got != tt.want {
			t.Errorf("%s: got %v, %v; want %v (ok %v)", tt.name, got, err, tt.want, tt.ok)
		}
	}
}

func TestOwnProcessReadsFromProc(t *testing.T) {
	if _, err := ProcessCPU(os.Getpid()); err != nil {
		t.Fatal(err)
	}
}
