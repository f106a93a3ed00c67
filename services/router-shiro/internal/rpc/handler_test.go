package rpc

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"connectrpc.com/connect"

	"github.com/picoclaw-suite/picoclaw/services/router-shiro/internal/domain"
)

func TestToConnect(t *testing.T) {
	tests := []struct {
		err     error
		code    connect.Code
		message string
		logged  bool
	}{
		{fmt.Errorf("text: %w: empty", domain.ErrInvalid), connect.CodeInvalidArgument, "text: invalid: empty", false},
		{fmt.Errorf("x: %w", domain.ErrPermission), connect.CodePermissionDenied, "x: permission denied", false},
		{fmt.Errorf("coder: %w", domain.ErrUnavailable), connect.CodeUnavailable, "a dependency is unavailable", false},
		{fmt.Errorf("loop: %w", context.Canceled), connect.CodeCanceled, "request cancelled", false},
		{fmt.Errorf("loop: %w", context.DeadlineExceeded), connect.CodeDeadlineExceeded, "deadline exceeded", false},
		{errors.New("disk on fire at /var/secret"), connect.CodeInternal, "internal error", true},
	}
	for _, tt := range tests {
		var buf bytes.Buffer
		h := &Handler{Log: slog.New(slog.NewJSONHandler(&buf, nil))}
		err := h.toConnect(context.Background(), tt.err)
		var ce *connect.Error
		if !errors.As(err, &ce) || ce.Code() != tt.code || ce.Message() != tt.message {
			t.Errorf("%v: got %v", tt.err, err)
		}
		if logged := strings.Contains(buf.String(), "router.internal_error"); logged != tt.logged {
			t.Errorf("%v: logged %v, want %v", tt.err, logged, tt.logged)
		}
	}
}

func TestValidChannel(t *testing.T) {
	for in, want := range map[string]bool{"": true, "line": true, "slack": true, "cli": true, "my-bot_2": true, "LINE": false, "a b": false, strings.Repeat("x", 33): false} {
		if got := validChannel(in); got != want {
			t.Errorf("%q: %v", in, got)
		}
	}
}
