package store

import (
	"context"
	"database/sql/driver"
	"errors"
	"fmt"
	"net"
	"syscall"
	"testing"

	"github.com/lib/pq"

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
		"admin shutdown": {fmt.Errorf("q: %w", &pq.Error{Code: "57P01", Message: "terminating connection due to administrator command"}), true},
		"cannot connect": {&pq.Error{Code: "57P03"}, true},
		"conn failure":   {&pq.Error{Code: "08006"}, true},
		"reset":          {fmt.Errorf("read: %w", syscall.ECONNRESET), true},
		"unique":         {&pq.Error{Code: "23505"}, false},
		"not connected":  {fmt.Errorf("begin: %w", &pgConnectError{err: &pq.Error{Code: "28P01"}}), true},
		"bad conn":       {fmt.Errorf("query: %w", driver.ErrBadConn), true},
		"timed out":      {fmt.Errorf("query: %w", context.DeadlineExceeded), true},
		"cancelled":      {context.Canceled, false},
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
