package store

import (
	"errors"
	"fmt"
	"net"
	"syscall"
	"testing"

	"github.com/jackc/pgx/v5/pgconn"

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
		"admin shutdown": {fmt.Errorf("q: %w", &pgconn.PgError{Code: "57P01", Message: "terminating connection due to administrator command"}), true},
		"cannot connect": {&pgconn.PgError{Code: "57P03"}, true},
		"conn failure":   {&pgconn.PgError{Code: "08006"}, true},
		"reset":          {fmt.Errorf("read: %w", syscall.ECONNRESET), true},
		"unique":         {&pgconn.PgError{Code: "23505"}, false},
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
