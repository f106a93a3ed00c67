package approvalclient

import (
	"context"
	"errors"
	"log/slog"
	"testing"

	"connectrpc.com/connect"

	"github.com/picoclaw-suite/picoclaw/pkg/fault"
	"github.com/picoclaw-suite/picoclaw/pkg/rpcserver"
	"github.com/picoclaw-suite/picoclaw/services/executor/internal/domain"
)

func TestMapErr(t *testing.T) {
	tests := []struct {
		in   error
		want error
	}{
		{connect.NewError(connect.CodeNotFound, errors.New("job x not found")), domain.ErrNotFound},
		{connect.NewError(connect.CodeFailedPrecondition, errors.New("job x is DENIED")), domain.ErrConflict},
		{rpcserver.ToConnect(context.Background(), slog.New(slog.DiscardHandler), "approval",
			fault.WithReason(fault.Precondition, "EXPIRED", "job x expired")), domain.ErrExpired},
		{connect.NewError(connect.CodeFailedPrecondition, errors.New("job x expired")), domain.ErrConflict},
		{connect.NewError(connect.CodeAborted, errors.New("claimed concurrently")), domain.ErrConflict},
		{connect.NewError(connect.CodePermissionDenied, errors.New("no")), domain.ErrPermission},
		{connect.NewError(connect.CodeInvalidArgument, errors.New("bad id")), domain.ErrInvalid},
		{connect.NewError(connect.CodeUnavailable, errors.New("down")), domain.ErrUnavailable},
		{connect.NewError(connect.CodeUnavailable, errors.New("dial tcp: refused")), domain.ErrUnavailable},
	}
	for _, tt := range tests {
		if got := mapErr(tt.in); !errors.Is(got, tt.want) {
			t.Errorf("mapErr(%v) = %v, want %v", tt.in, got, tt.want)
		}
	}
	if got := mapErr(connect.NewError(connect.CodeInternal, errors.New("boom"))); isDomain(got) {
		t.Errorf("internal error mapped to a domain error: %v", got)
	}
}

// isDomain reports whether err is one of the domain sentinels.
func isDomain(err error) bool {
	for _, s := range []error{domain.ErrNotFound, domain.ErrConflict, domain.ErrExpired, domain.ErrPermission, domain.ErrInvalid, domain.ErrUnavailable, domain.ErrHashMismatch} {
		if errors.Is(err, s) {
			return true
		}
	}
	return false
}
