// Package rpc maps the Connect API of heartbeat onto its use cases.
package rpc

import "github.com/picoclaw-suite/picoclaw/gen/picoclaw/heartbeat/v1/heartbeatv1connect"

// Handler implements heartbeatv1connect.HeartbeatServiceHandler.
type Handler struct {
	heartbeatv1connect.UnimplementedHeartbeatServiceHandler
}

var _ heartbeatv1connect.HeartbeatServiceHandler = (*Handler)(nil)
