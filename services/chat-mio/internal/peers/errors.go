// Package peers adapts the Connect APIs of chat-mio's peers (router-shiro, approval, executor,
// heartbeat, the gateways' notifications) to the ports of internal/app.
package peers

import (
	"github.com/picoclaw-suite/picoclaw/pkg/fault"
	"github.com/picoclaw-suite/picoclaw/pkg/rpcserver"
	"github.com/picoclaw-suite/picoclaw/services/chat-mio/internal/domain"
)

// kindSentinels are chat-mio's errors by fault kind.
var kindSentinels = map[fault.Kind]error{
	fault.Unavailable: domain.ErrUnavailable, fault.Deadline: domain.ErrUnavailable, fault.Canceled: domain.ErrUnavailable,
	fault.NotFound:     domain.ErrNotFound,
	fault.Precondition: domain.ErrConflict, fault.Conflict: domain.ErrConflict,
	fault.Permission: domain.ErrForbidden, fault.Unauthenticated: domain.ErrForbidden,
	fault.Invalid: domain.ErrInvalid,
}

// classify is the one place where a peer's Connect failure becomes a chat-mio error, by the
// fault kind the suite's one mapping reads from it (pkg/rpcserver.FromConnect): transient
// failures (the peer unreachable, too slow, the call cancelled) are domain.ErrUnavailable; a
// refusal keeps its kind and the text the peer gave for the user (its
// google.rpc.LocalizedMessage, in the locale chat-mio asked for) — never the Connect message,
// whose English is for logs; anything else is unexpected and wraps no sentinel.
func classify(peer string, err error) error {
	if err == nil {
		return nil
	}
	back := rpcserver.FromConnect(err)
	pe := &domain.PeerError{Peer: peer, Cause: err, Kind: kindSentinels[fault.KindOf(back)]}
	if text, ok := fault.Text(back, ""); ok {
		pe.Message = text
	}
	pe.Reason = fault.ReasonOf(back)
	return pe
}
