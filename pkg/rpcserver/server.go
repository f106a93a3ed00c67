// Package rpcserver serves a service's Connect API and plain HTTP routes over h2c with the
// suite's interceptors, health, readiness, metrics and graceful shutdown.
package rpcserver

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"maps"
	"net"
	"net/http"
	"net/http/pprof"
	"slices"
	"strings"
	"sync"
	"time"

	"connectrpc.com/connect"
	"connectrpc.com/grpchealth"
	"github.com/go-chi/chi/v5"
	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/collectors"
	"github.com/prometheus/client_golang/prometheus/promhttp"

	"github.com/picoclaw-suite/picoclaw/pkg/buildinfo"
	"github.com/picoclaw-suite/picoclaw/pkg/heartbeat"
	"github.com/picoclaw-suite/picoclaw/pkg/idlemem"
	"github.com/picoclaw-suite/picoclaw/pkg/replica"
	"github.com/picoclaw-suite/picoclaw/pkg/svcauth"
	"github.com/picoclaw-suite/picoclaw/pkg/telemetry"
)

// Config configures a Server.
type Config struct {
	// Name is the service name (metrics label, health, logs).
	Name string
	// Listen is the TCP address; ignored when Listener is set.
	Listen string
	// Listener, when set, is used instead of Listen (tests and the embedded suite pass ":0" listeners).
	Listener net.Listener
	// PublicListen is the address of the public listener (webhooks, REST, console), separate
	// from the internal one; empty means the service has no public surface.
	PublicListen string
	// PublicListener, when set, is used instead of PublicListen.
	PublicListener net.Listener
	// MaxBodyBytes caps request bodies on the internal listener (default 1 MiB); the public
	// listener's cap is always the default.
	MaxBodyBytes int64
	// Limits are the listeners' timeouts and caps (zero fields take the defaults).
	Limits Limits
	// ShutdownTimeout bounds graceful shutdown (default 1.5 s) before connections are closed.
	ShutdownTimeout time.Duration
	// Credentials prove this service to its peers and verify its callers: every Connect call
	// it serves must come from an identity the authorization matrix allows. Required.
	Credentials *svcauth.Credentials
	// Heartbeat configures the heartbeat sender Run starts (use HeartbeatFrom(cfg.Common)).
	// When nil, the suite defaults with their environment overrides apply: the sender is on.
	Heartbeat *Heartbeat
	// Pprof serves net/http/pprof under /debug/pprof/ (config debug.pprof; off by default).
	Pprof bool
	// Replica names this process among the service's replicas (config replica_id); empty: a
	// new replica.NewID.
	Replica string
}

// Validate checks the configuration.
func (c Config) Validate() error {
	if c.Name == "" {
		return errors.New("rpcserver: name is required")
	}
	if c.Listener == nil && c.Listen == "" {
		return fmt.Errorf("rpcserver %s: listen address is required", c.Name)
	}
	if c.Credentials == nil {
		return fmt.Errorf("rpcserver %s: service credentials are required (PICOCLAW_SERVICE_KEY and auth.public_keys)", c.Name)
	}
	return c.Limits.Validate()
}

// ReadinessCheck reports whether a dependency is usable.
type ReadinessCheck func(ctx context.Context) error

// Server is one service's HTTP server.
type Server struct {
	cfg Config
	// inflight counts requests being served, for a shutdown that ends when they do.
	inflight inflight
	tel      *telemetry.Telemetry
	router   chi.Router
	public   chi.Router
	auth     *svcauth.Authorizer
	registry *prometheus.Registry
	metrics  *metrics
	otel     connect.Interceptor

	mu       sync.Mutex
	checks   map[string]ReadinessCheck
	services []string
	addr     net.Addr
	pubAddr  net.Addr
	ready    chan struct{}

	hb       *heartbeat.Sender
	hbIgnore ignoreSet

	longLived map[string]bool

	ownsTelemetry bool
	// lastNotReady is the set of failing readiness checks last answered (sorted, joined).
	lastNotReady string
	// loc is the suite's time zone (Start sets it).
	loc *time.Location
}

const defaultMaxBody = 1 << 20

// New builds a server; routes are added with Mount and Router before Run.
func New(cfg Config, tel *telemetry.Telemetry) (*Server, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	if cfg.MaxBodyBytes <= 0 {
		cfg.MaxBodyBytes = defaultMaxBody
	}
	if cfg.ShutdownTimeout <= 0 {
		cfg.ShutdownTimeout = 1500 * time.Millisecond
	}
	cfg.Limits = cfg.Limits.withDefaults()
	cfg.Replica = replica.Or(cfg.Replica, cfg.Name)
	// Every Connect call is internal and authenticated, so its trace context is trusted; the
	// public listener's routes start their own traces.
	oi, err := traceInterceptor(tel, true)
	if err != nil {
		return nil, fmt.Errorf("rpcserver %s: otel interceptor: %w", cfg.Name, err)
	}
	reg := prometheus.NewRegistry()
	reg.MustRegister(collectors.NewGoCollector(), collectors.NewProcessCollector(collectors.ProcessCollectorOpts{}))
	s := &Server{
		cfg:      cfg,
		tel:      tel,
		router:   chi.NewRouter(),
		auth:     svcauth.NewAuthorizer(cfg.Credentials, tel.Logger),
		registry: reg,
		metrics:  newMetrics(reg, cfg.Name),
		otel:     oi,
		checks:   map[string]ReadinessCheck{},
		ready:    make(chan struct{}),
		hbIgnore: ignoreSet{procs: map[string]bool{}},
	}
	if s.hb, err = s.newHeartbeat(); err != nil {
		return nil, err
	}
	s.router.Use(s.limitBody(cfg.MaxBodyBytes), s.limitTime, s.countHTTP)
	s.router.Get("/healthz", s.serveHealth)
	s.router.Get("/readyz", s.serveReady)
	if cfg.PublicListen != "" || cfg.PublicListener != nil {
		s.public = chi.NewRouter()
		s.public.Use(s.limitBody(min(cfg.MaxBodyBytes, defaultMaxBody)), s.limitTime, s.countHTTP)
		s.public.Get("/healthz", s.serveHealth)
		s.public.Get("/readyz", s.servePublicReady)
	}
	// Scrapes come over the internal network (loopback by default): a gzip compressor per scrape
	// would take ~1 MB of heap and more CPU than the bytes it saves.
	s.router.Handle("/metrics", promhttp.HandlerFor(reg, promhttp.HandlerOpts{Registry: reg, DisableCompression: true}))
	if cfg.Pprof {
		// Heap profiles sample the allocations from now on (sampling is off by default: idlemem).
		idlemem.SampleHeap()
		s.router.HandleFunc("/debug/pprof/*", pprof.Index)
		s.router.HandleFunc("/debug/pprof/cmdline", pprof.Cmdline)
		s.router.HandleFunc("/debug/pprof/profile", pprof.Profile)
		s.router.HandleFunc("/debug/pprof/symbol", pprof.Symbol)
		s.router.HandleFunc("/debug/pprof/trace", pprof.Trace)
	}
	path, h := grpchealth.NewHandler(&checker{s: s})
	s.router.Mount(path, h)
	return s, nil
}

// Logger is the service logger.
func (s *Server) Logger() *slog.Logger { return s.tel.Logger }

// Replica is this process's id among the service's replicas (config replica_id or generated).
func (s *Server) Replica() string { return s.cfg.Replica }

// Telemetry is the service telemetry.
func (s *Server) Telemetry() *telemetry.Telemetry { return s.tel }

// Registry is the service's Prometheus registry, for service-specific metrics.
func (s *Server) Registry() *prometheus.Registry { return s.registry }

// Router is the internal listener's router, for plain HTTP routes only the suite uses.
func (s *Server) Router() chi.Router { return s.router }

// PublicRouter is the public listener's router (nil when the service has none).
func (s *Server) PublicRouter() chi.Router { return s.public }

func (s *Server) serveHealth(w http.ResponseWriter, _ *http.Request) {
	bi := buildinfo.Get()
	writeJSON(w, http.StatusOK, map[string]string{"status": "ok", "service": s.cfg.Name, "version": bi.Version, "commit": bi.Commit})
}

// HandlerOptions are the options every Connect handler of the suite uses.
func (s *Server) HandlerOptions(extra ...connect.HandlerOption) []connect.HandlerOption {
	interceptors := []connect.Interceptor{s.otel, jobIDServer(), s.metrics.interceptor(), logInterceptor(s.tel.Logger), s.auth}
	opts := []connect.HandlerOption{
		connect.WithInterceptors(append(interceptors, s.trackInterceptor())...),
		connect.WithReadMaxBytes(int(s.cfg.MaxBodyBytes)),
		// Replies between the services are small and stay on the host or the local network:
		// gzip for them cost more CPU (a compressor per message) than it saved.
		connect.WithCompressMinBytes(compressMinBytes),
	}
	return append(opts, extra...)
}

// compressMinBytes is the size from which responses are gzipped when the client accepts it.
const compressMinBytes = 16 << 10

// Mount registers a Connect service handler (the path/handler pair the generated
// New…ServiceHandler returns) and makes it known to the gRPC health service.
func (s *Server) Mount(path string, h http.Handler) {
	s.mu.Lock()
	s.services = append(s.services, strings.Trim(path, "/"))
	s.mu.Unlock()
	s.router.Mount(path, s.auth.Middleware(h))
}

// HandleHTTP registers a plain HTTP handler on the internal listener, traced (a server span
// named "<METHOD> <pattern>", see traceHTTP) in the trace its caller propagates.
func (s *Server) HandleHTTP(method, pattern string, h http.Handler) {
	s.router.Method(method, pattern, traceHTTP(method+" "+pattern, s.trackHTTP(h), s.tel.TracerProvider, s.tel.Propagator))
}

// HandlePublic registers a handler on the public listener. Trace context from outside is not
// trusted there: every request starts a new trace.
func (s *Server) HandlePublic(method, pattern string, h http.Handler) {
	s.public.Method(method, pattern, s.PublicHandler(method+" "+pattern, h))
}

// PublicHandler wraps a public handler (traced, untrusted context) for mounting by hand.
func (s *Server) PublicHandler(name string, h http.Handler) http.Handler {
	return traceHTTP(name, s.trackHTTP(h), s.tel.TracerProvider, noPropagation{})
}

// PublicAddr is the public listener's bound address, valid after Ready (nil without one).
func (s *Server) PublicAddr() net.Addr {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.pubAddr
}

// AddReadiness registers a dependency check for /readyz and the gRPC health service.
func (s *Server) AddReadiness(name string, check ReadinessCheck) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.checks[name] = check
}

// Ready is closed once the server listens.
func (s *Server) Ready() <-chan struct{} { return s.ready }

// Addr is the bound address, valid after Ready.
func (s *Server) Addr() net.Addr {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.addr
}

// Run serves until ctx is cancelled, then shuts down gracefully within ShutdownTimeout. The
// heartbeat sender runs while the server listens and stops with it, so a stopped service goes
// silent and the heartbeat service marks it timeout.
func (s *Server) Run(ctx context.Context) error {
	ln := s.cfg.Listener
	if ln == nil {
		var err error
		ln, err = net.Listen("tcp", s.cfg.Listen)
		if err != nil {
			return fmt.Errorf("%s: listen %s: %w", s.cfg.Name, s.cfg.Listen, err)
		}
	}
	var pub net.Listener
	if s.public != nil {
		pub = s.cfg.PublicListener
		if pub == nil {
			var err error
			pub, err = net.Listen("tcp", s.cfg.PublicListen)
			if err != nil {
				_ = ln.Close()
				return fmt.Errorf("%s: listen %s (public): %w", s.cfg.Name, s.cfg.PublicListen, err)
			}
		}
	}
	s.mu.Lock()
	s.addr = ln.Addr()
	if pub != nil {
		s.pubAddr = pub.Addr()
	}
	s.mu.Unlock()
	servers := []*http.Server{s.httpServer(ctx, s.router, true)}
	stopInProcess := func() {}
	// In-process calls run in a context of their own that ends with the drain, as the network's
	// connections do.
	inProcessCtx, endInProcess := context.WithCancel(context.WithoutCancel(ctx))
	defer endInProcess()
	if _, ok := ln.(inProcessListener); ok {
		stopInProcess = serveInProcess(ln.Addr().String(), s.listenerHandler(s.router, false), inProcessCtx, &s.inflight)
		defer stopInProcess()
	}
	listeners := []net.Listener{s.limitListener(ln)}
	if pub != nil {
		// The public side speaks HTTP/1.1 and HTTP/2 over TLS from a proxy; no h2c.
		servers = append(servers, s.httpServer(ctx, s.public, false))
		listeners = append(listeners, limitPerClient(s.limitListener(pub), perClientConns))
	}
	errc := make(chan error, len(servers))
	for i, hs := range servers {
		go func() { errc <- hs.Serve(listeners[i]) }()
	}
	hbCtx, stopHB := context.WithCancel(ctx)
	hbDone := make(chan struct{})
	go func() {
		defer close(hbDone)
		_ = s.hb.Run(hbCtx)
	}()
	defer func() {
		stopHB()
		<-hbDone
	}()
	close(s.ready)
	attrs := []any{slog.String("addr", ln.Addr().String())}
	if pub != nil {
		attrs = append(attrs, slog.String("public_addr", pub.Addr().String()))
	}
	s.tel.Logger.InfoContext(ctx, "server.started", attrs...)
	var serveErr error
	select {
	case serveErr = <-errc:
		serveErr = fmt.Errorf("%s: serve: %w", s.cfg.Name, serveErr)
	case <-ctx.Done():
	}
	// Stop beating before the grace period so the service is not reported alive while it drains.
	stopHB()
	<-hbDone
	// From here calls go to the closed listener, as they would over the network.
	stopInProcess()
	sctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.cfg.ShutdownTimeout)
	defer cancel()
	var err error
	_ = drain(sctx, &s.inflight, servers)
	endInProcess()
	for range len(servers) - btoi(serveErr != nil) {
		<-errc
	}
	s.tel.Logger.InfoContext(ctx, "server.stopped")
	if s.ownsTelemetry {
		err = errors.Join(err, s.tel.Shutdown(context.WithoutCancel(ctx)))
	}
	return errors.Join(serveErr, err)
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

func (s *Server) readiness(ctx context.Context) map[string]string {
	s.mu.Lock()
	checks := make(map[string]ReadinessCheck, len(s.checks))
	for k, v := range s.checks {
		checks[k] = v
	}
	s.mu.Unlock()
	failures := map[string]string{}
	ctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	for name, check := range checks {
		if err := check(ctx); err != nil {
			failures[name] = err.Error()
		}
	}
	return failures
}

// serveReady names the dependencies that are down, with a stable code; their errors (hosts,
// users, database names) go to the log, once each time the set of failing checks changes.
func (s *Server) serveReady(w http.ResponseWriter, r *http.Request) {
	if failures := s.readiness(r.Context()); len(failures) > 0 {
		names := make(map[string]string, len(failures))
		for name := range failures {
			names[name] = "unavailable"
		}
		s.logReadiness(r.Context(), failures)
		writeJSON(w, http.StatusServiceUnavailable, map[string]any{"status": "unavailable", "code": "dependency_unavailable",
			"service": s.cfg.Name, "failures": names})
		return
	}
	s.logReadiness(r.Context(), nil)
	writeJSON(w, http.StatusOK, map[string]string{"status": "ready", "service": s.cfg.Name})
}

func (s *Server) limitBody(limit int64) func(http.Handler) http.Handler {
	return func(next http.Handler) http.Handler {
		return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			if r.ContentLength > limit {
				writeJSON(w, http.StatusRequestEntityTooLarge, map[string]string{"code": "body_too_large",
					"message": fmt.Sprintf("request body exceeds %d bytes", limit)})
				return
			}
			r.Body = http.MaxBytesReader(w, r.Body, limit)
			next.ServeHTTP(w, r)
		})
	}
}

// logReadiness logs the failing checks with their errors when the set of failing checks changed
// since the last readiness answer, and the recovery when it is empty again.
func (s *Server) logReadiness(ctx context.Context, failures map[string]string) {
	names := slices.Sorted(maps.Keys(failures))
	key := strings.Join(names, ",")
	s.mu.Lock()
	changed := key != s.lastNotReady
	s.lastNotReady = key
	s.mu.Unlock()
	if !changed {
		return
	}
	if len(names) == 0 {
		s.tel.Logger.InfoContext(ctx, "service.ready_again")
		return
	}
	attrs := make([]any, 0, len(names))
	for _, n := range names {
		attrs = append(attrs, slog.String(n, failures[n]))
	}
	s.tel.Logger.WarnContext(ctx, "service.not_ready", attrs...)
}

// servePublicReady says only whether the service is ready: dependency errors (hosts, users)
// stay on the internal listener.
func (s *Server) servePublicReady(w http.ResponseWriter, r *http.Request) {
	if failures := s.readiness(r.Context()); len(failures) > 0 {
		writeJSON(w, http.StatusServiceUnavailable, map[string]string{"status": "unavailable", "code": "dependency_unavailable",
			"service": s.cfg.Name})
		return
	}
	writeJSON(w, http.StatusOK, map[string]string{"status": "ready", "service": s.cfg.Name})
}

type checker struct{ s *Server }

func (c *checker) Check(ctx context.Context, req *grpchealth.CheckRequest) (*grpchealth.CheckResponse, error) {
	if req.Service != "" {
		c.s.mu.Lock()
		known := false
		for _, svc := range c.s.services {
			known = known || svc == req.Service
		}
		c.s.mu.Unlock()
		if !known {
			return nil, connect.NewError(connect.CodeNotFound, fmt.Errorf("unknown service %q", req.Service))
		}
	}
	if len(c.s.readiness(ctx)) > 0 {
		return &grpchealth.CheckResponse{Status: grpchealth.StatusNotServing}, nil
	}
	return &grpchealth.CheckResponse{Status: grpchealth.StatusServing}, nil
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

// NewService builds the telemetry and the server of one service; Run flushes the telemetry
// when it returns.
func NewService(ctx context.Context, cfg Config, tcfg telemetry.Config) (*Server, error) {
	if tcfg.ServiceName == "" {
		tcfg.ServiceName = cfg.Name
	}
	tel, err := telemetry.New(ctx, tcfg.FromEnv())
	if err != nil {
		return nil, err
	}
	s, err := New(cfg, tel)
	if err != nil {
		_ = tel.Shutdown(ctx)
		return nil, err
	}
	s.ownsTelemetry = true
	return s, nil
}
