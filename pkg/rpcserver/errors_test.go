package rpcserver

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"connectrpc.com/connect"

	"github.com/picoclaw-suite/picoclaw/pkg/fault"
)

var (
	errInvalid  = fault.New(fault.Invalid, "invalid")
	errGone     = fault.New(fault.NotFound, "not found")
	errDown     = fault.New(fault.Unavailable, "unavailable")
	errTampered = fault.WithReason(fault.DataLoss, "AUDIT_TAMPERED", "audit log tampered")
)

func TestToConnect(t *testing.T) {
	tests := []struct {
		err     error
		code    connect.Code
		message string
		logged  string
	}{
		{fmt.Errorf("text: %w: empty", errInvalid), connect.CodeInvalidArgument, "text: invalid: empty", ""},
		{fmt.Errorf("job x: %w", errGone), connect.CodeNotFound, "job x: not found", ""},
		{fmt.Errorf("redis 10.0.0.7:6379: %w", errDown), connect.CodeUnavailable, "svc: a dependency is unavailable; retry later", "svc.dependency_unavailable"},
		{fmt.Errorf("loop: %w", context.Canceled), connect.CodeCanceled, "loop: context canceled", ""},
		{fmt.Errorf("loop: %w", context.DeadlineExceeded), connect.CodeDeadlineExceeded, "loop: context deadline exceeded", ""},
		{errors.New("disk on fire at /var/secret"), connect.CodeInternal, "internal error", "svc.internal_error"},
		{fmt.Errorf("job x: %w", errTampered), connect.CodeDataLoss, "job x: audit log tampered", ""},
	}
	for _, tt := range tests {
		var buf bytes.Buffer
		err := ToConnect(context.Background(), slog.New(slog.NewJSONHandler(&buf, nil)), "svc", tt.err)
		var ce *connect.Error
		if !errors.As(err, &ce) || ce.Code() != tt.code || ce.Message() != tt.message {
			t.Errorf("%v: got %v", tt.err, err)
			continue
		}
		if tt.logged != "" && !strings.Contains(buf.String(), tt.logged) || tt.logged == "" && buf.Len() > 0 {
			t.Errorf("%v: log %q, want %q", tt.err, buf.String(), tt.logged)
		}
		// The caller's side reads the same kind (and reason) back.
		back := FromConnect(err)
		if fault.KindOf(back) != fault.KindOf(tt.err) || fault.ReasonOf(back) != fault.ReasonOf(tt.err) {
			t.Errorf("%v: round trip gives %v/%q", tt.err, fault.KindOf(back), fault.ReasonOf(back))
		}
	}
}

func TestFromConnectTransportErrors(t *testing.T) {
	if k := fault.KindOf(FromConnect(connect.NewError(connect.CodeUnavailable, errors.New("dial tcp 127.0.0.1:9: connection refused")))); k != fault.Unavailable {
		t.Errorf("connection refused: %v", k)
	}
	if k := fault.KindOf(FromConnect(errors.New("a bug of our own"))); k != fault.Internal {
		t.Errorf("a plain error: %v", k)
	}
	if k := fault.KindOf(FromConnect(connect.NewError(connect.CodeUnknown, errors.New("502 bad gateway")))); k != fault.Unavailable {
		t.Errorf("unknown code: %v", k)
	}
	if k := fault.KindOf(FromConnect(context.DeadlineExceeded)); k != fault.Deadline {
		t.Errorf("deadline: %v", k)
	}
	if FromConnect(nil) != nil || ToConnect(context.Background(), slog.New(slog.DiscardHandler), "svc", nil) != nil {
		t.Error("nil must stay nil")
	}
}
