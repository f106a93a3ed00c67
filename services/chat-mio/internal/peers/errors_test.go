package peers

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"connectrpc.com/connect"

	"github.com/picoclaw-suite/picoclaw/services/chat-mio/internal/domain"
)

func TestClassify(t *testing.T) {
	tests := []struct {
		err  error
		kind error // nil: unexpected
		msg  string
	}{
		{connect.NewError(connect.CodeUnavailable, errors.New("dial tcp 127.0.0.1:1: connect: connection refused")), domain.ErrUnavailable, "dial tcp 127.0.0.1:1: connect: connection refused"},
		{connect.NewError(connect.CodeDeadlineExceeded, errors.New("slow")), domain.ErrUnavailable, "slow"},
		{connect.NewError(connect.CodeCanceled, context.Canceled), domain.ErrUnavailable, "context canceled"},
		{fmt.Errorf("call: %w", context.DeadlineExceeded), domain.ErrUnavailable, ""},
		{connect.NewError(connect.CodeNotFound, errors.New("job job_20260101_001 not found")), domain.ErrNotFound, "job job_20260101_001 not found"},
		{connect.NewError(connect.CodeFailedPrecondition, errors.New("job is denied")), domain.ErrConflict, "job is denied"},
		{connect.NewError(connect.CodeAlreadyExists, errors.New("exists")), domain.ErrConflict, "exists"},
		{connect.NewError(connect.CodeAborted, errors.New("raced")), domain.ErrConflict, "raced"},
		{connect.NewError(connect.CodePermissionDenied, errors.New("not an approver")), domain.ErrForbidden, "not an approver"},
		{connect.NewError(connect.CodeUnauthenticated, errors.New("no token")), domain.ErrForbidden, "no token"},
		{connect.NewError(connect.CodeInvalidArgument, errors.New("bad ttl")), domain.ErrInvalid, "bad ttl"},
		{connect.NewError(connect.CodeInternal, errors.New("internal error")), nil, "internal error"},
		{connect.NewError(connect.CodeDataLoss, errors.New("hash mismatch")), nil, "hash mismatch"},
		{errors.New("plain"), nil, ""},
	}
	kinds := []error{domain.ErrUnavailable, domain.ErrNotFound, domain.ErrConflict, domain.ErrForbidden, domain.ErrInvalid}
	for _, tt := range tests {
		got := classify("approval", tt.err)
		for _, k := range kinds {
			if errors.Is(got, k) != (k == tt.kind) {
				t.Errorf("%v: errors.Is(%v) = %v", tt.err, k, !(k == tt.kind))
			}
		}
		if m := domain.PeerMessage(got); m != tt.msg {
			t.Errorf("%v: message %q, want %q", tt.err, m, tt.msg)
		}
		if !errors.Is(got, tt.err) {
			t.Errorf("%v: cause lost", tt.err)
		}
	}
	if classify("approval", nil) != nil {
		t.Fatal("nil classified as an error")
	}
}
