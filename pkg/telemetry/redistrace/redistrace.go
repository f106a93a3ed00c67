//go:build !sqliteonly

// Package redistrace traces every Redis command of a client as a span of its own (OpenTelemetry
// database conventions: db.system.name redis, db.operation.name, server.address), one for a
// pipeline or MULTI, without the command's arguments (keys and values may hold chat text).
package redistrace

import (
	"fmt"

	"github.com/redis/go-redis/extra/redisotel/v9"
	"github.com/redis/go-redis/v9"
	"go.opentelemetry.io/otel/trace"

	"github.com/picoclaw-suite/picoclaw/pkg/telemetry"
)

// Instrument adds the tracing hook to rdb; spans go to tp.
// Nothing is added when tp records nothing (no exporter).
func Instrument(rdb *redis.Client, tp trace.TracerProvider) error {
	if !telemetry.Records(tp) {
		return nil
	}
	if err := redisotel.InstrumentTracing(rdb, redisotel.WithTracerProvider(tp), redisotel.WithDBStatement(false),
		// The caller's file and line cost a stack walk per command; the span name says what ran.
		redisotel.WithCallerEnabled(false)); err != nil {
		return fmt.Errorf("redis tracing: %w", err)
	}
	return nil
}
