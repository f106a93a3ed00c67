package rpcserver_test

import (
	"context"
	"testing"

	routerv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/router/v1"
	"github.com/picoclaw-suite/picoclaw/pkg/jobid"
	"github.com/picoclaw-suite/picoclaw/pkg/svcauth"
)

// BenchmarkInProcessCall is one unary call between two components of one process, through
// everything a call between the embedded suite's components passes: the client's interceptors
// (deadline, JobID, credentials, tracing), the in-process transport and the server's middleware
// and interceptors (limits, authentication, authorization, logging, metrics, tracing).
func BenchmarkInProcessCall(b *testing.B) {
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	url, ln, done := inProcessRouter(b, ctx, func(context.Context, *routerv1.DecideRequest) (*routerv1.DecideResponse, error) {
		return &routerv1.DecideResponse{}, nil
	})
	client := routerClient(b, url, svcauth.ChatMio)
	id := "job_20261128_0001"
	cctx := jobid.WithJobID(ctx, id)
	req := &routerv1.DecideRequest{Text: "こんにちは", JobId: id}
	before := ln.n.Load()
	b.ReportAllocs()
	for b.Loop() {
		if _, err := client.Decide(cctx, req); err != nil {
			b.Fatal(err)
		}
	}
	b.StopTimer()
	if n := ln.n.Load() - before; n != 0 {
		b.Fatalf("%d connections: the calls went over the network", n)
	}
	cancel()
	<-done
}
