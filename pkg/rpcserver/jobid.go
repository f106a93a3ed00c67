package rpcserver

import (
	"context"
	"fmt"

	"connectrpc.com/connect"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"github.com/picoclaw-suite/picoclaw/pkg/jobid"
)

// jobIDField is the request field that names the job a call is about.
const jobIDField protoreflect.Name = "job_id"

// requestJobID is the request's top-level string field job_id, or "".
func requestJobID(msg any) string {
	m, ok := msg.(proto.Message)
	if !ok {
		return ""
	}
	r := m.ProtoReflect()
	fd := r.Descriptor().Fields().ByName(jobIDField)
	if fd == nil || fd.Kind() != protoreflect.StringKind || fd.IsList() || fd.IsMap() {
		return ""
	}
	return r.Get(fd).String()
}

// jobIDServer makes a call's JobID one value: the request's job_id field and the baggage's
// job_id must agree (a call that carries two different ones is refused), the field fills in
// when the baggage has none, and the result is on the context (so logs carry it), on the
// call's span and in the baggage the handler propagates further. Handlers never reconcile
// the two by hand.
func jobIDServer() connect.Interceptor { return jobIDInterceptor(false) }

// jobIDClient puts a request's job_id field into the outgoing baggage: the field wins, so a
// call about job B made while handling job A carries B.
func jobIDClient() connect.Interceptor { return jobIDInterceptor(true) }

func jobIDInterceptor(fieldWins bool) connect.Interceptor {
	return connect.UnaryInterceptorFunc(func(next connect.UnaryFunc) connect.UnaryFunc {
		return func(ctx context.Context, req connect.AnyRequest) (connect.AnyResponse, error) {
			ctx, err := reconcileJobID(ctx, requestJobID(req.Any()), fieldWins)
			if err != nil {
				return nil, err
			}
			return next(ctx, req)
		}
	})
}

func reconcileJobID(ctx context.Context, field string, fieldWins bool) (context.Context, error) {
	bag := jobid.FromContext(ctx)
	if field != "" && bag != "" && field != bag && !fieldWins {
		return ctx, connect.NewError(connect.CodeInvalidArgument,
			fmt.Errorf("job_id %q of the request differs from job_id %q of the baggage", field, bag))
	}
	if field != "" && field != bag {
		ctx = jobid.WithJobID(ctx, field)
	}
	if id := jobid.FromContext(ctx); id != "" && !fieldWins {
		trace.SpanFromContext(ctx).SetAttributes(attribute.String(jobid.BaggageKey, id))
	}
	return ctx, nil
}
