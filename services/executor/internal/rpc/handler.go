// Package rpc maps the Connect API of executor onto its use cases.
package rpc

import "github.com/picoclaw-suite/picoclaw/gen/picoclaw/executor/v1/executorv1connect"

// Handler implements executorv1connect.ExecutorServiceHandler.
type Handler struct {
	executorv1connect.UnimplementedExecutorServiceHandler
}

var _ executorv1connect.ExecutorServiceHandler = (*Handler)(nil)
