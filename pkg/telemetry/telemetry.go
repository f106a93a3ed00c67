// Package telemetry sets up tracing (OTLP when configured), W3C propagation, the baggage →
// span attribute copy for job_id, and the JSON logger. Nothing here touches OTel globals, so
// several services can share one process, each with its own service.name.
package telemetry

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"sync"
	"time"

	"go.opentelemetry.io/contrib/processors/baggagecopy"
	"go.opentelemetry.io/otel/baggage"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/sdk/resource"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	semconv "go.opentelemetry.io/otel/semconv/v1.26.0"
	"go.opentelemetry.io/otel/trace"

	"github.com/picoclaw-suite/picoclaw/pkg/jobid"
)

// Config configures telemetry for one service.
type Config struct {
	ServiceName string
	LogLevel    string
	// OTLPEndpoint is the OTLP/HTTP collector (OTEL_EXPORTER_OTLP_ENDPOINT, e.g. http://127.0.0.1:4318); empty = no export.
	OTLPEndpoint string
	// LogWriter receives the JSON log; default stdout.
	LogWriter io.Writer
	// SpanProcessors are added to the tracer provider (tests add an in-memory recorder).
	SpanProcessors []sdktrace.SpanProcessor
}

// FromEnv fills OTLPEndpoint from OTEL_EXPORTER_OTLP_ENDPOINT.
func (c Config) FromEnv() Config {
	if c.OTLPEndpoint == "" {
		c.OTLPEndpoint = os.Getenv("OTEL_EXPORTER_OTLP_ENDPOINT")
	}
	return c
}

// Telemetry is one service's tracer provider, propagator and logger.
type Telemetry struct {
	TracerProvider *sdktrace.TracerProvider
	Propagator     propagation.TextMapPropagator
	Logger         *slog.Logger
}

// Propagator is the suite's propagator: W3C TraceContext and Baggage.
func Propagator() propagation.TextMapPropagator {
	return propagation.NewCompositeTextMapPropagator(propagation.TraceContext{}, propagation.Baggage{})
}

// New builds telemetry for a service. Call Shutdown to flush spans on exit.
func New(ctx context.Context, cfg Config) (*Telemetry, error) {
	if cfg.ServiceName == "" {
		return nil, errors.New("telemetry: service name is required")
	}
	w := cfg.LogWriter
	if w == nil {
		w = os.Stdout
	}
	res, err := resource.Merge(resource.Default(), resource.NewWithAttributes(semconv.SchemaURL,
		semconv.ServiceName(cfg.ServiceName)))
	if err != nil {
		res = resource.NewSchemaless(semconv.ServiceName(cfg.ServiceName))
	}
	opts := []sdktrace.TracerProviderOption{
		sdktrace.WithResource(res),
		// job_id rides in baggage; copy it onto every span started in this service.
		sdktrace.WithSpanProcessor(baggagecopy.NewSpanProcessor(func(m baggage.Member) bool {
			return m.Key() == jobid.BaggageKey
		})),
	}
	if cfg.OTLPEndpoint != "" {
		exp, err := newOTLPExporter(ctx, cfg.OTLPEndpoint)
		if err != nil {
			return nil, fmt.Errorf("telemetry: otlp exporter: %w", err)
		}
		opts = append(opts, sdktrace.WithBatcher(exp))
	}
	for _, sp := range cfg.SpanProcessors {
		opts = append(opts, sdktrace.WithSpanProcessor(sp))
	}
	recording := cfg.OTLPEndpoint != "" || len(cfg.SpanProcessors) > 0
	if !recording {
		// Nothing would receive a span: none is recorded. Spans still get their trace and span
		// ids, so trace contexts are stored with jobs and propagated between services as before.
		opts = append(opts, sdktrace.WithSampler(sdktrace.NeverSample()))
	} else {
		// Every span of a service that exports is recorded, whatever the caller's flags say: a
		// peer that records nothing (no exporter) marks its contexts unsampled, and the job's
		// trace must not lose this service's spans for it.
		opts = append(opts, sdktrace.WithSampler(sdktrace.AlwaysSample()))
	}
	tp := sdktrace.NewTracerProvider(opts...)
	made.Store(tp, true)
	if recording {
		recorders.Store(tp, true)
	}
	return &Telemetry{
		TracerProvider: tp,
		Propagator:     Propagator(),
		Logger:         NewLogger(w, cfg.LogLevel, cfg.ServiceName),
	}, nil
}

// recorders are the tracer providers New made that record spans (an exporter or a span
// processor receives them).
var recorders sync.Map

// Records reports whether tp records spans: a provider New made with an exporter or span
// processors, or any other provider (tests' own). Instrumentation that only makes spans (the
// outbound HTTP and Redis tracing) is left out where nothing would receive them.
func Records(tp trace.TracerProvider) bool {
	if tp == nil {
		return false
	}
	if sdk, ok := tp.(*sdktrace.TracerProvider); ok {
		_, rec := recorders.Load(sdk)
		return rec || !madeByNew(sdk)
	}
	return true
}

// made are every tracer provider New made.
var made sync.Map

func madeByNew(tp *sdktrace.TracerProvider) bool { _, ok := made.Load(tp); return ok }

// Tracer returns a named tracer of this service.
func (t *Telemetry) Tracer(name string) trace.Tracer { return t.TracerProvider.Tracer(name) }

// Shutdown flushes pending spans and stops the exporter, bounded by ctx.
func (t *Telemetry) Shutdown(ctx context.Context) error {
	if t == nil || t.TracerProvider == nil {
		return nil
	}
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	defer func() { made.Delete(t.TracerProvider); recorders.Delete(t.TracerProvider) }()
	return errors.Join(t.TracerProvider.ForceFlush(ctx), t.TracerProvider.Shutdown(ctx))
}
