package rpcserver

import (
	"context"
	"crypto/sha256"
	"crypto/subtle"
	"errors"

	"connectrpc.com/connect"
)

// InternalTokenHeader carries the suite's shared service credential on every internal call.
const InternalTokenHeader = "Picoclaw-Internal-Token"

var errInternalToken = errors.New("missing or wrong internal service token")

// WithInternalToken makes a client send the suite's service credential (PICOCLAW_INTERNAL_TOKEN).
// An empty token sends nothing.
func WithInternalToken(token string) connect.ClientOption {
	if token == "" {
		return connect.WithInterceptors()
	}
	return connect.WithInterceptors(&tokenInterceptor{token: token})
}

// tokenInterceptor sets the credential on client calls and, on the server, refuses calls
// without it: with a token configured, only the suite's own services may call its Connect APIs
// (the approval API, the gateways' notification API), even where their ports are reachable.
type tokenInterceptor struct {
	token string
}

func (t *tokenInterceptor) valid(got string) bool {
	a, b := sha256.Sum256([]byte(got)), sha256.Sum256([]byte(t.token))
	return subtle.ConstantTimeCompare(a[:], b[:]) == 1
}

func (t *tokenInterceptor) WrapUnary(next connect.UnaryFunc) connect.UnaryFunc {
	return func(ctx context.Context, req connect.AnyRequest) (connect.AnyResponse, error) {
		if req.Spec().IsClient {
			req.Header().Set(InternalTokenHeader, t.token)
		} else if !t.valid(req.Header().Get(InternalTokenHeader)) {
			return nil, connect.NewError(connect.CodeUnauthenticated, errInternalToken)
		}
		return next(ctx, req)
	}
}

func (t *tokenInterceptor) WrapStreamingClient(next connect.StreamingClientFunc) connect.StreamingClientFunc {
	return func(ctx context.Context, spec connect.Spec) connect.StreamingClientConn {
		conn := next(ctx, spec)
		conn.RequestHeader().Set(InternalTokenHeader, t.token)
		return conn
	}
}

func (t *tokenInterceptor) WrapStreamingHandler(next connect.StreamingHandlerFunc) connect.StreamingHandlerFunc {
	return func(ctx context.Context, conn connect.StreamingHandlerConn) error {
		if !t.valid(conn.RequestHeader().Get(InternalTokenHeader)) {
			return connect.NewError(connect.CodeUnauthenticated, errInternalToken)
		}
		return next(ctx, conn)
	}
}
