package svcauth

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"time"

	"connectrpc.com/connect"
)

// Headers that carry the proofs on internal calls.
const (
	ServiceTokenHeader = "Picoclaw-Service-Token"
	PrincipalHeader    = "Picoclaw-Principal"
)

// Authorizer is the server interceptor: it verifies the caller's service token, checks the
// caller against the matrix, verifies a principal assertion when one is sent (and requires one
// where the matrix says so), and puts caller and principal into the request context.
type Authorizer struct {
	creds  *Credentials
	policy Policy
	log    *slog.Logger
	now    func() time.Time
}

// NewAuthorizer builds the interceptor for the server of creds.Self.
func NewAuthorizer(creds *Credentials, log *slog.Logger) *Authorizer {
	return &Authorizer{creds: creds, policy: NewPolicy(Matrix()), log: log, now: time.Now}
}

func (a *Authorizer) authorize(ctx context.Context, procedure string, h http.Header) (context.Context, error) {
	now := a.now()
	caller, err := a.creds.VerifyService(h.Get(ServiceTokenHeader), now)
	if err != nil {
		a.refuse(ctx, "", procedure, err)
		return ctx, connect.NewError(connect.CodeUnauthenticated, errors.New("a valid service credential is required"))
	}
	rule, ok := a.policy.Allowed(caller, procedure)
	if !ok {
		a.refuse(ctx, caller, procedure, errors.New("not in the authorization matrix"))
		return ctx, connect.NewError(connect.CodePermissionDenied, errors.New(caller+" may not call "+procedure))
	}
	ctx = withCaller(ctx, caller)
	raw := h.Get(PrincipalHeader)
	if raw == "" {
		if rule.Principal {
			a.refuse(ctx, caller, procedure, errors.New("no principal assertion"))
			return ctx, connect.NewError(connect.CodePermissionDenied, errors.New("this call must carry the verified user it acts for"))
		}
		return ctx, nil
	}
	p, err := a.creds.VerifyPrincipal(raw, now)
	if err == nil {
		// A channel's own voucher may only send the users it vouched for itself.
		if v, isVoucher := voucherIdentity(caller); isVoucher && p.Voucher != v {
			err = errors.New("principal vouched by " + p.Voucher + ", sent by " + caller)
		}
	}
	if err != nil {
		a.refuse(ctx, caller, procedure, err)
		return ctx, connect.NewError(connect.CodePermissionDenied, errors.New("the user assertion is not valid"))
	}
	return WithPrincipal(ctx, p), nil
}

func voucherIdentity(caller string) (string, bool) {
	for _, v := range vouchers {
		if v == caller {
			return v, true
		}
	}
	return "", false
}

func (a *Authorizer) refuse(ctx context.Context, caller, procedure string, reason error) {
	if a.log == nil {
		return
	}
	if caller == "" {
		caller = "unauthenticated"
	}
	a.log.WarnContext(ctx, "auth.refused", slog.String("caller", caller), slog.String("method", procedure),
		slog.String("reason", reason.Error()))
}

// Middleware refuses a call before its body is read when the caller's token is missing or
// invalid, or the matrix does not allow it: an unauthenticated client cannot make a service
// buffer request bodies. The interceptor then does the full check (principal included). The
// refusal is a Connect error (JSON) with the HTTP status gRPC clients map to the same code.
func (a *Authorizer) Middleware(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		caller, err := a.creds.VerifyService(r.Header.Get(ServiceTokenHeader), a.now())
		if err != nil {
			a.refuse(r.Context(), "", r.URL.Path, err)
			writeRefusal(w, http.StatusUnauthorized, "unauthenticated", "a valid service credential is required")
			return
		}
		if _, ok := a.policy.Allowed(caller, r.URL.Path); !ok {
			a.refuse(r.Context(), caller, r.URL.Path, errors.New("not in the authorization matrix"))
			writeRefusal(w, http.StatusForbidden, "permission_denied", caller+" may not call "+r.URL.Path)
			return
		}
		next.ServeHTTP(w, r)
	})
}

func writeRefusal(w http.ResponseWriter, status int, code, msg string) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(map[string]string{"code": code, "message": msg})
}

// WrapUnary implements connect.Interceptor.
func (a *Authorizer) WrapUnary(next connect.UnaryFunc) connect.UnaryFunc {
	return func(ctx context.Context, req connect.AnyRequest) (connect.AnyResponse, error) {
		if req.Spec().IsClient {
			return next(ctx, req)
		}
		ctx, err := a.authorize(ctx, req.Spec().Procedure, req.Header())
		if err != nil {
			return nil, err
		}
		return next(ctx, req)
	}
}

// WrapStreamingClient implements connect.Interceptor.
func (a *Authorizer) WrapStreamingClient(next connect.StreamingClientFunc) connect.StreamingClientFunc {
	return next
}

// WrapStreamingHandler implements connect.Interceptor.
func (a *Authorizer) WrapStreamingHandler(next connect.StreamingHandlerFunc) connect.StreamingHandlerFunc {
	return func(ctx context.Context, conn connect.StreamingHandlerConn) error {
		ctx, err := a.authorize(ctx, conn.Spec().Procedure, conn.RequestHeader())
		if err != nil {
			return err
		}
		return next(ctx, conn)
	}
}

// Client returns the client option that proves creds.Self to target on every call and forwards
// the principal of the request being served (or the one a gateway put into the context).
func Client(creds *Credentials, target string) connect.ClientOption {
	return connect.WithInterceptors(&clientInterceptor{creds: creds, target: target})
}

type clientInterceptor struct {
	creds  *Credentials
	target string
}

func (c *clientInterceptor) set(ctx context.Context, h http.Header) error {
	tok, err := c.creds.ServiceToken(c.target, time.Now())
	if err != nil {
		return connect.NewError(connect.CodeInternal, err)
	}
	h.Set(ServiceTokenHeader, tok)
	if p, ok := PrincipalFrom(ctx); ok {
		h.Set(PrincipalHeader, p.Raw)
	}
	return nil
}

func (c *clientInterceptor) WrapUnary(next connect.UnaryFunc) connect.UnaryFunc {
	return func(ctx context.Context, req connect.AnyRequest) (connect.AnyResponse, error) {
		if req.Spec().IsClient {
			if err := c.set(ctx, req.Header()); err != nil {
				return nil, err
			}
		}
		return next(ctx, req)
	}
}

func (c *clientInterceptor) WrapStreamingClient(next connect.StreamingClientFunc) connect.StreamingClientFunc {
	return func(ctx context.Context, spec connect.Spec) connect.StreamingClientConn {
		conn := next(ctx, spec)
		_ = c.set(ctx, conn.RequestHeader())
		return conn
	}
}

func (c *clientInterceptor) WrapStreamingHandler(next connect.StreamingHandlerFunc) connect.StreamingHandlerFunc {
	return next
}
