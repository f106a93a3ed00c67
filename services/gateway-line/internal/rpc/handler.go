// Package rpc maps the Connect API of gateway-line onto its use cases.
package rpc

import "github.com/picoclaw-suite/picoclaw/gen/picoclaw/gateway/v1/gatewayv1connect"

// Handler implements gatewayv1connect.NotificationServiceHandler.
type Handler struct {
	gatewayv1connect.UnimplementedNotificationServiceHandler
}

var _ gatewayv1connect.NotificationServiceHandler = (*Handler)(nil)
