// Package peers adapts the gateways' notification API to chat-mio's Notifier port.
package peers

import (
	"context"
	"fmt"

	gatewayv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/gateway/v1"
	"github.com/picoclaw-suite/picoclaw/gen/picoclaw/gateway/v1/gatewayv1connect"
	"github.com/picoclaw-suite/picoclaw/services/chat-mio/internal/domain"
)

// Gateways pushes to the gateway that owns the session's channel (line:, slack:, cli:).
type Gateways struct {
	ByChannel map[string]gatewayv1connect.NotificationServiceClient
}

// Push implements app.Notifier.
func (g Gateways) Push(ctx context.Context, req *gatewayv1.PushRequest) error {
	ch := domain.Channel(req.GetSessionId())
	c, ok := g.ByChannel[ch]
	if !ok || c == nil {
		return fmt.Errorf("push to %s: %w: no gateway configured for channel %q", req.GetSessionId(), domain.ErrUnavailable, ch)
	}
	if _, err := c.Push(ctx, req); err != nil {
		return fmt.Errorf("push to %s: %w", req.GetSessionId(), err)
	}
	return nil
}
