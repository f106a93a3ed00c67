package peers

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"connectrpc.com/connect"
	"google.golang.org/genproto/googleapis/rpc/errdetails"

	"github.com/picoclaw-suite/picoclaw/services/chat-mio/internal/domain"
)

// said is a refusal as a peer sends it: an English message for logs and its text for the user.
func said(code connect.Code, english, text string) error {
	err := connect.NewError(code, errors.New(english))
	if d, derr := connect.NewErrorDetail(&errdetails.LocalizedMessage{Locale: "ja", Message: text}); derr == nil {
		err.AddDetail(d)
	}
	return err
}

// TestClassify: a peer's failure keeps its kind; the user is shown the peer's text for the user
// and never its English message.
func TestClassify(t *testing.T) {
	tests := []struct {
		err  error
		kind error // nil: unexpected
		msg  string
	}{
		{connect.NewError(connect.CodeUnavailable, errors.New("dial tcp 127.0.0.1:1: connect: connection refused")), domain.ErrUnavailable, ""},
		{connect.NewError(connect.CodeDeadlineExceeded, errors.New("slow")), domain.ErrUnavailable, ""},
		{connect.NewError(connect.CodeCanceled, context.Canceled), domain.ErrUnavailable, ""},
		{fmt.Errorf("call: %w", context.DeadlineExceeded), domain.ErrUnavailable, ""},
		{connect.NewError(connect.CodeNotFound, errors.New("job job_20260101_001 not found")), domain.ErrNotFound, ""},
		{connect.NewError(connect.CodeFailedPrecondition, errors.New("job is denied")), domain.ErrConflict, ""},
		{connect.NewError(connect.CodeAlreadyExists, errors.New("exists")), domain.ErrConflict, ""},
		{connect.NewError(connect.CodeAborted, errors.New("raced")), domain.ErrConflict, ""},
		{connect.NewError(connect.CodePermissionDenied, errors.New("not an approver")), domain.ErrForbidden, ""},
		{connect.NewError(connect.CodeUnauthenticated, errors.New("no token")), domain.ErrForbidden, ""},
		{connect.NewError(connect.CodeInvalidArgument, errors.New("bad ttl")), domain.ErrInvalid, ""},
		{connect.NewError(connect.CodeInternal, errors.New("internal error")), nil, ""},
		{connect.NewError(connect.CodeDataLoss, errors.New("hash mismatch")), nil, ""},
		{errors.New("plain"), nil, ""},
		// Only the text the peer gave for the user is shown to the user, in the locale asked.
		{said(connect.CodeFailedPrecondition, "job job_20260101_001 is pending, not approved", "ジョブ job_20260101_001 は承認待ちのため実行できません（承認されていません）"),
			domain.ErrConflict, "ジョブ job_20260101_001 は承認待ちのため実行できません（承認されていません）"},
		{said(connect.CodeInvalidArgument, "ttl must be positive", "ttl は正の値にしてください"), domain.ErrInvalid, "ttl は正の値にしてください"},
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
