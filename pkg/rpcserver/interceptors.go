package rpcserver

import (
	"context"
	"errors"
	"log/slog"
	"net/http"
	"strconv"
	"time"

	"connectrpc.com/connect"
	"github.com/go-chi/chi/v5"
	"github.com/prometheus/client_golang/prometheus"
)

type metrics struct {
	rpcTotal    *prometheus.CounterVec
	rpcDuration *prometheus.HistogramVec
	httpTotal   *prometheus.CounterVec
	httpLatency *prometheus.HistogramVec
}

func newMetrics(reg prometheus.Registerer, service string) *metrics {
	labels := prometheus.Labels{"service": service}
	m := &metrics{}
	m.rpcTotal, m.rpcDuration = requestMetrics(labels, "rpc", "Connect RPCs handled, by procedure and code.", "Connect RPC latency.", "procedure", "code")
	m.httpTotal, m.httpLatency = requestMetrics(labels, "http", "HTTP requests, by route and status.", "HTTP request latency.", "route", "status")
	reg.MustRegister(m.rpcTotal, m.rpcDuration, m.httpTotal, m.httpLatency)
	return m
}

// requestMetrics are picoclaw_<kind>_requests_total, by what and outcome, and
// picoclaw_<kind>_request_duration_seconds, by what.
func requestMetrics(labels prometheus.Labels, kind, totalHelp, durationHelp, what, outcome string) (*prometheus.CounterVec, *prometheus.HistogramVec) {
	total := prometheus.NewCounterVec(prometheus.CounterOpts{
		Name: "picoclaw_" + kind + "_requests_total", Help: totalHelp, ConstLabels: labels,
	}, []string{what, outcome})
	duration := prometheus.NewHistogramVec(prometheus.HistogramOpts{
		Name: "picoclaw_" + kind + "_request_duration_seconds", Help: durationHelp, ConstLabels: labels,
		Buckets: prometheus.ExponentialBuckets(0.0005, 2, 16),
	}, []string{what})
	return total, duration
}

func (m *metrics) interceptor() connect.Interceptor {
	return connect.UnaryInterceptorFunc(func(next connect.UnaryFunc) connect.UnaryFunc {
		return func(ctx context.Context, req connect.AnyRequest) (connect.AnyResponse, error) {
			start := time.Now()
			res, err := next(ctx, req)
			proc := req.Spec().Procedure
			m.rpcDuration.WithLabelValues(proc).Observe(time.Since(start).Seconds())
			m.rpcTotal.WithLabelValues(proc, codeOf(err)).Inc()
			return res, err
		}
	})
}

func codeOf(err error) string {
	if err == nil {
		return "ok"
	}
	return connect.CodeOf(err).String()
}

type statusRecorder struct {
	http.ResponseWriter
	status int
}

func (r *statusRecorder) WriteHeader(code int) {
	r.status = code
	r.ResponseWriter.WriteHeader(code)
}

func (r *statusRecorder) Flush() {
	if f, ok := r.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

func (r *statusRecorder) Unwrap() http.ResponseWriter { return r.ResponseWriter }

func (s *Server) countHTTP(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		start := time.Now()
		rec := &statusRecorder{ResponseWriter: w, status: http.StatusOK}
		next.ServeHTTP(rec, r)
		route := "unmatched"
		if rc := chi.RouteContext(r.Context()); rc != nil && rc.RoutePattern() != "" {
			route = rc.RoutePattern()
		}
		s.metrics.httpTotal.WithLabelValues(route, strconv.Itoa(rec.status)).Inc()
		s.metrics.httpLatency.WithLabelValues(route).Observe(time.Since(start).Seconds())
	})
}

// logInterceptor logs each RPC (debug) and every failure (warn for client errors, error for
// internal ones); the logger adds job_id and trace_id from the context.
func logInterceptor(log *slog.Logger) connect.Interceptor {
	return connect.UnaryInterceptorFunc(func(next connect.UnaryFunc) connect.UnaryFunc {
		return func(ctx context.Context, req connect.AnyRequest) (connect.AnyResponse, error) {
			start := time.Now()
			res, err := next(ctx, req)
			attrs := []slog.Attr{
				slog.String("procedure", req.Spec().Procedure),
				slog.Int64("duration_ms", time.Since(start).Milliseconds()),
			}
			if err == nil {
				log.LogAttrs(ctx, slog.LevelDebug, "rpc.handled", attrs...)
				return res, nil
			}
			attrs = append(attrs, slog.String("code", codeOf(err)), slog.String("error", err.Error()))
			level := slog.LevelWarn
			var ce *connect.Error
			if !errors.As(err, &ce) || ce.Code() == connect.CodeInternal || ce.Code() == connect.CodeUnknown {
				level = slog.LevelError
			}
			log.LogAttrs(ctx, level, "rpc.failed", attrs...)
			return res, err
		}
	})
}
