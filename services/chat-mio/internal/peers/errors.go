// Package peers adapts the Connect APIs of chat-mio's peers (router-shiro, approval, executor,
// heartbeat, the gateways' notifications) to the ports of internal/app.
package peers

import (
	"context"
	"errors"

	"connectrpc.com/connect"

	"github.com/picoclaw-suite/picoclaw/services/chat-mio/internal/domain"
)

// classify is the one place where a peer's Connect failure becomes a chat-mio error: transient
// failures (the peer unreachable, too slow, the call cancelled) are domain.ErrUnavailable; a
// refusal keeps its kind and the peer's message; anything else is unexpected and wraps no
// sentinel.
func classify(peer string, err error) error {
	if err == nil {
		return nil
	}
	pe := &domain.PeerError{Peer: peer, Cause: err}
	var ce *connect.Error
	if errors.As(err, &ce) {
		pe.Message = ce.Message()
	}
	code := connect.CodeOf(err)
	if errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled) {
		code = connect.CodeDeadlineExceeded
	}
	switch code {
	case connect.CodeUnavailable, connect.CodeDeadlineExceeded, connect.CodeCanceled:
		pe.Kind = domain.ErrUnavailable
	case connect.CodeNotFound:
		pe.Kind = domain.ErrNotFound
	case connect.CodeFailedPrecondition, connect.CodeAlreadyExists, connect.CodeAborted:
		pe.Kind = domain.ErrConflict
	case connect.CodePermissionDenied, connect.CodeUnauthenticated:
		pe.Kind = domain.ErrForbidden
	case connect.CodeInvalidArgument, connect.CodeOutOfRange:
		pe.Kind = domain.ErrInvalid
	}
	return pe
}
