package store

import (
	"errors"
	"fmt"
	"net"
	"testing"

	"github.com/picoclaw-suite/picoclaw/services/approval/internal/domain"
)

func TestUnavailableMarksConnectionFailuresOnly(t *testing.T) {
	refused := &net.OpError{Op: "dial", Net: "tcp", Err: errors.New("connection refused")}
	for name, c := range map[string]struct {
		err  error
		want bool
	}{
		"refused":        {fmt.Errorf("get job: %w", refused), true},
		"already marked": {domain.ErrUnavailable, true},
		"not found":      {fmt.Errorf("x: %w", domain.ErrNotFound), false},
		"conflict":       {domain.ErrConflict, false},
		"plain":          {errors.New("syntax error"), false},
	} {
		got := Unavailable(c.err)
		if errors.Is(got, domain.ErrUnavailable) != c.want {
			t.Errorf("%s: %v", name, got)
		}
		if !errors.Is(got, c.err) {
			t.Errorf("%s: the cause is lost: %v", name, got)
		}
	}
	if Unavailable(nil) != nil {
		t.Error("nil became an error")
	}
}
