package rpcserver

import (
	"context"

	"go.opentelemetry.io/otel/propagation"
)

type propagatorIface = propagation.TextMapPropagator

// noPropagation ignores inbound trace headers: the public edge starts its own traces.
type noPropagation struct{}

func (noPropagation) Inject(context.Context, propagation.TextMapCarrier) {}
func (noPropagation) Extract(ctx context.Context, _ propagation.TextMapCarrier) context.Context {
	return ctx
}
func (noPropagation) Fields() []string { return nil }
