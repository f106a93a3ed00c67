package rpcserver

import (
	"context"
	"fmt"
	"net/http"
	"sync"
	"time"

	"connectrpc.com/connect"

	"github.com/picoclaw-suite/picoclaw/pkg/config"
	"github.com/picoclaw-suite/picoclaw/pkg/heartbeat"
	"github.com/picoclaw-suite/picoclaw/pkg/jobid"
	"github.com/picoclaw-suite/picoclaw/pkg/svcauth"
)

// Heartbeat configures the heartbeat sender every server runs (SPEC §9).
type Heartbeat struct {
	Enabled bool
	// URL is the heartbeat service's base URL (services.heartbeat.url).
	URL      string
	Interval time.Duration
}

// HeartbeatFrom takes the sender settings from a service's validated common config:
// heartbeat.enabled, heartbeat.interval_sec and services.heartbeat.url.
func HeartbeatFrom(c config.Common) *Heartbeat {
	return &Heartbeat{
		Enabled:  c.HeartbeatSender.Enabled,
		URL:      c.Services.Heartbeat.URL,
		Interval: time.Duration(c.HeartbeatSender.IntervalSec) * time.Second,
	}
}

func (s *Server) newHeartbeat() (*heartbeat.Sender, error) {
	hb := s.cfg.Heartbeat
	if hb == nil {
		// Not configured (tests, tools): track work but send nothing.
		hb = &Heartbeat{}
	}
	cfg := heartbeat.Config{
		Service:       s.cfg.Name,
		Replica:       s.cfg.Replica,
		Interval:      hb.Interval,
		HTTPClient:    NewHTTPClient(),
		ClientOptions: []connect.ClientOption{svcauth.Client(s.cfg.Credentials, svcauth.Heartbeat)},
		Logger:        s.tel.Logger,
	}
	if hb.Enabled {
		cfg.URL = hb.URL
	}
	sender, err := heartbeat.NewSender(cfg)
	if err != nil {
		return nil, fmt.Errorf("rpcserver %s: %w", s.cfg.Name, err)
	}
	return sender, nil
}

// Heartbeat is the server's sender: the service's own tracker and the hosted agents.
func (s *Server) Heartbeat() *heartbeat.Sender { return s.hb }

// Agent registers an agent hosted by this service (chat/Mio, worker/Shiro, order1/Aka, ...);
// it beats next to the service with its own status. Wrap the agent's work in
// Begin(jobID)/End(err). Calling it again with the same id returns the same agent.
func (s *Server) Agent(id, alias string) *heartbeat.Agent { return s.hb.Agent(id, alias) }

// IgnoreInHeartbeat keeps procedures (e.g. the heartbeat service's own Beat) out of the
// service's busy status.
func (s *Server) IgnoreInHeartbeat(procedures ...string) {
	s.hbIgnore.mu.Lock()
	defer s.hbIgnore.mu.Unlock()
	for _, p := range procedures {
		s.hbIgnore.procs[p] = true
	}
}

type ignoreSet struct {
	mu    sync.Mutex
	procs map[string]bool
}

func (i *ignoreSet) has(p string) bool {
	i.mu.Lock()
	defer i.mu.Unlock()
	return i.procs[p]
}

// trackInterceptor makes unary RPCs the service's tasks: busy with their job ids while in
// flight, error after a failure of the service itself. Client mistakes (invalid argument, not
// found, ...) are not the service's fault and leave it idle. Streams are subscriptions, not
// tasks, so they are not tracked.
func (s *Server) trackInterceptor() connect.Interceptor {
	return connect.UnaryInterceptorFunc(func(next connect.UnaryFunc) connect.UnaryFunc {
		return func(ctx context.Context, req connect.AnyRequest) (connect.AnyResponse, error) {
			if s.hbIgnore.has(req.Spec().Procedure) {
				return next(ctx, req)
			}
			task := s.hb.Service().Begin(jobid.FromContext(ctx))
			res, err := next(ctx, req)
			task.End(serviceFault(err))
			return res, err
		}
	})
}

func serviceFault(err error) error {
	if err == nil {
		return nil
	}
	switch connect.CodeOf(err) {
	case connect.CodeInternal, connect.CodeUnknown, connect.CodeDataLoss, connect.CodeUnavailable:
		return err
	}
	return nil
}

// trackHTTP does the same for plain HTTP routes (webhooks, REST): a 5xx answer is a failure.
func (s *Server) trackHTTP(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		task := s.hb.Service().Begin(jobid.FromContext(r.Context()))
		rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
		next.ServeHTTP(rec, r)
		var err error
		if rec.status >= http.StatusInternalServerError {
			err = fmt.Errorf("%s %s: HTTP %d", r.Method, r.URL.Path, rec.status)
		}
		task.End(err)
	})
}
