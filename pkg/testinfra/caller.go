package testinfra

import (
	"context"
	"net/http"
	"slices"
	"testing"
	"time"

	"connectrpc.com/connect"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/picoclaw-suite/picoclaw/pkg/svcauth"
)

// AsSuite is a client option for tests that play the rest of the suite: each call is made as
// the first identity the authorization matrix allows for its procedure, and a call that names
// a person (an actor or requested_by field) carries that person's assertion signed by their
// channel's voucher — what the real gateways and chat-mio send. A call that must act for a
// person and names none acts for cli:tester. Tests of refusals build their clients with
// svcauth.Client instead.
func AsSuite(t testing.TB, target string) connect.ClientOption {
	t.Helper()
	opt, err := SuiteCaller(target)
	if err != nil {
		t.Fatalf("suite caller: %v", err)
	}
	return opt
}

// SuiteCaller is AsSuite for tools outside tests (the load tool), with the test keys.
func SuiteCaller(target string) (connect.ClientOption, error) {
	creds := map[string]*svcauth.Credentials{}
	for _, id := range svcauth.Identities() {
		c, err := svcauth.Load(id, Auth(id))
		if err != nil {
			return nil, err
		}
		creds[id] = c
	}
	return connect.WithInterceptors(&suiteCaller{creds: creds, policy: svcauth.NewPolicy(svcauth.Matrix()), target: target}), nil
}

type suiteCaller struct {
	creds  map[string]*svcauth.Credentials
	policy svcauth.Policy
	target string
}

func (s *suiteCaller) set(procedure string, msg any, h http.Header) {
	rule, ok := s.policy[procedure]
	if !ok {
		return // refused by the server, as it should be
	}
	now := time.Now()
	caller := rule.Callers[0]
	channel, user := actorOf(msg)
	if user == "" && rule.Principal {
		channel, user = "cli", "tester"
	}
	if v, ok := svcauth.VoucherFor(channel); ok && user != "" {
		if a, err := s.creds[v].Vouch(channel, user, now); err == nil {
			h.Set(svcauth.PrincipalHeader, a)
		}
		// A channel's messages come from that channel's own gateway.
		if slices.Contains(rule.Callers, v) {
			caller = v
		}
	}
	// A heartbeat is sent by the service it is about.
	if svc := beatService(msg); svc != "" && slices.Contains(rule.Callers, svc) {
		caller = svc
	}
	if tok, err := s.creds[caller].ServiceToken(s.target, now); err == nil {
		h.Set(svcauth.ServiceTokenHeader, tok)
	}
}

// beatService is the service a BeatRequest reports for ("" for other messages).
func beatService(msg any) string {
	m, ok := msg.(interface{ ProtoReflect() protoreflect.Message })
	if !ok {
		return ""
	}
	r := m.ProtoReflect()
	f := r.Descriptor().Fields().ByName("heartbeat")
	if f == nil || f.Message() == nil || !r.Has(f) {
		return ""
	}
	hb := r.Get(f).Message()
	if sf := hb.Descriptor().Fields().ByName("service"); sf != nil {
		return hb.Get(sf).String()
	}
	return ""
}

// actorOf finds the person a request names: its actor or requested_by field, or, for
// HandleMessage, its channel and user_id.
func actorOf(msg any) (channel, user string) {
	m, ok := msg.(interface{ ProtoReflect() protoreflect.Message })
	if !ok {
		return "", ""
	}
	r := m.ProtoReflect()
	fields := r.Descriptor().Fields()
	for _, name := range []protoreflect.Name{"actor", "requested_by"} {
		if f := fields.ByName(name); f != nil && f.Message() != nil && r.Has(f) {
			a := r.Get(f).Message()
			af := a.Descriptor().Fields()
			if id, ch := af.ByName("id"), af.ByName("channel"); id != nil && ch != nil {
				return a.Get(ch).String(), a.Get(id).String()
			}
		}
	}
	if ch, u := fields.ByName("channel"), fields.ByName("user_id"); ch != nil && u != nil {
		return r.Get(ch).String(), r.Get(u).String()
	}
	return "", ""
}

func (s *suiteCaller) WrapUnary(next connect.UnaryFunc) connect.UnaryFunc {
	return func(ctx context.Context, req connect.AnyRequest) (connect.AnyResponse, error) {
		if req.Spec().IsClient {
			s.set(req.Spec().Procedure, req.Any(), req.Header())
		}
		return next(ctx, req)
	}
}

func (s *suiteCaller) WrapStreamingClient(next connect.StreamingClientFunc) connect.StreamingClientFunc {
	return func(ctx context.Context, spec connect.Spec) connect.StreamingClientConn {
		conn := next(ctx, spec)
		s.set(spec.Procedure, nil, conn.RequestHeader())
		return conn
	}
}

func (s *suiteCaller) WrapStreamingHandler(next connect.StreamingHandlerFunc) connect.StreamingHandlerFunc {
	return next
}
