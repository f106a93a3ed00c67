package rpc

import (
	"context"
	"errors"
	"log/slog"

	"github.com/picoclaw-suite/picoclaw/pkg/rpcserver"
	"github.com/picoclaw-suite/picoclaw/services/approval/internal/domain"
)

// toConnect maps approval's errors by their fault kind (pkg/rpcserver.ToConnect); the extra
// here is that a tampered audit log is always logged where it is refused.
func toConnect(ctx context.Context, log *slog.Logger, err error) error {
	return toConnectIn(ctx, log, err, "")
}

// toConnectIn is toConnect for a request that names the user's locale: a refusal carries its
// text (domain.Texts) in it.
func toConnectIn(ctx context.Context, log *slog.Logger, err error, locale string) error {
	if errors.Is(err, domain.ErrTampered) {
		log.ErrorContext(ctx, "approval.audit_tampered", slog.String("error", err.Error()))
	}
	return rpcserver.ToConnectIn(ctx, log, "approval", err, locale)
}
