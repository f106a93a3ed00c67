package rpc

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"
	"testing"

	"connectrpc.com/connect"

	"github.com/picoclaw-suite/picoclaw/services/executor/internal/domain"
)

func TestToConnect(t *testing.T) {
	h := &Handler{log: slog.New(slog.DiscardHandler)}
	tests := []struct {
		err  error
		code connect.Code
	}{
		{fmt.Errorf("x: %w", domain.ErrInvalid), connect.CodeInvalidArgument},
		{fmt.Errorf("x: %w", domain.ErrNotFound), connect.CodeNotFound},
		{fmt.Errorf("x: %w", domain.ErrConflict), connect.CodeFailedPrecondition},
		{fmt.Errorf("x: %w", domain.ErrExpired), connect.CodeFailedPrecondition},
		{fmt.Errorf("x: %w", domain.ErrPermission), connect.CodePermissionDenied},
		{fmt.Errorf("x: %w", domain.ErrHashMismatch), connect.CodeDataLoss},
		{fmt.Errorf("x: %w", domain.ErrUnavailable), connect.CodeUnavailable},
		{errors.New("disk on fire at /secret/path"), connect.CodeInternal},
	}
	for _, tt := range tests {
		err := h.toConnect(context.Background(), tt.err)
		var ce *connect.Error
		if !errors.As(err, &ce) || ce.Code() != tt.code {
			t.Errorf("%v -> %v, want %v", tt.err, err, tt.code)
		}
		if tt.code == connect.CodeInternal && strings.Contains(ce.Message(), "secret") {
			t.Errorf("internal detail leaked: %v", ce.Message())
		}
	}
}
