//go:build !sqliteonly

package store

import (
	"context"
	"strings"

	"github.com/redis/go-redis/v9"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
)

const instrumentation = "github.com/picoclaw-suite/picoclaw/services/approval/internal/store"

// RedisTracing is a go-redis hook that gives every Redis command a span.
type RedisTracing struct{ tr trace.Tracer }

// NewRedisTracing builds the hook on tp.
func NewRedisTracing(tp trace.TracerProvider) RedisTracing {
	return RedisTracing{tr: tp.Tracer(instrumentation)}
}

// DialHook passes dials through.
func (h RedisTracing) DialHook(next redis.DialHook) redis.DialHook { return next }

// ProcessHook traces one command.
func (h RedisTracing) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		ctx, span := h.tr.Start(ctx, "redis "+strings.ToUpper(cmd.Name()), trace.WithSpanKind(trace.SpanKindClient),
			trace.WithAttributes(attribute.String("db.system", "redis"), attribute.String("db.operation", cmd.Name())))
		defer span.End()
		err := next(ctx, cmd)
		if err != nil && err != redis.Nil {
			span.RecordError(err)
			span.SetStatus(codes.Error, err.Error())
		}
		return err
	}
}

// ProcessPipelineHook traces a pipeline as one span.
func (h RedisTracing) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		ctx, span := h.tr.Start(ctx, "redis pipeline", trace.WithSpanKind(trace.SpanKindClient),
			trace.WithAttributes(attribute.String("db.system", "redis"), attribute.Int("db.redis.commands", len(cmds))))
		defer span.End()
		err := next(ctx, cmds)
		if err != nil {
			span.RecordError(err)
			span.SetStatus(codes.Error, err.Error())
		}
		return err
	}
}
