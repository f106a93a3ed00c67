package rpc

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"connectrpc.com/connect"

	chatv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/chat/v1"
	"github.com/picoclaw-suite/picoclaw/pkg/svcauth"
	"github.com/picoclaw-suite/picoclaw/services/chat-mio/internal/domain"
)

type appFunc func(context.Context, *chatv1.HandleMessageRequest) (*chatv1.HandleMessageResponse, error)

func (f appFunc) HandleMessage(ctx context.Context, req *chatv1.HandleMessageRequest) (*chatv1.HandleMessageResponse, error) {
	return f(ctx, req)
}

func TestErrorMapping(t *testing.T) {
	tests := []struct {
		err    error
		code   connect.Code
		hidden string // text that must not reach the caller
	}{
		{fmt.Errorf("session: %w", domain.ErrInvalid), connect.CodeInvalidArgument, ""},
		{fmt.Errorf("x: %w", domain.ErrNotFound), connect.CodeNotFound, ""},
		{fmt.Errorf("redis 10.0.0.7:6379: %w", domain.ErrUnavailable), connect.CodeUnavailable, "10.0.0.7"},
		{fmt.Errorf("wait: %w", context.DeadlineExceeded), connect.CodeDeadlineExceeded, ""},
		{errors.New("allocate job id: secret detail"), connect.CodeInternal, "secret detail"},
	}
	for _, tt := range tests {
		h := &Handler{Log: slog.New(slog.DiscardHandler), App: appFunc(func(context.Context, *chatv1.HandleMessageRequest) (*chatv1.HandleMessageResponse, error) {
			return nil, tt.err
		})}
		ctx := svcauth.WithPrincipal(context.Background(), svcauth.Principal{Channel: "line", User: "U1", Raw: "assertion"})
		_, err := h.HandleMessage(ctx, &chatv1.HandleMessageRequest{Channel: "line", UserId: "U1"})
		if connect.CodeOf(err) != tt.code {
			t.Errorf("%v → %v, want %v", tt.err, connect.CodeOf(err), tt.code)
		}
		if tt.hidden != "" && strings.Contains(err.Error(), tt.hidden) {
			t.Errorf("%v leaks %q: %v", tt.err, tt.hidden, err)
		}
	}
}
