package peers

import (
	"context"
	"fmt"

	commonv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/common/v1"
	gatewayv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/gateway/v1"
	"github.com/picoclaw-suite/picoclaw/gen/picoclaw/gateway/v1/gatewayv1connect"
	"github.com/picoclaw-suite/picoclaw/services/chat-mio/internal/app"
	"github.com/picoclaw-suite/picoclaw/services/chat-mio/internal/domain"
)

// Gateways pushes to the gateway that owns the session's channel (line:, slack:, cli:).
type Gateways struct {
	ByChannel map[string]gatewayv1connect.NotificationServiceClient
}

var _ app.Notifier = Gateways{}

// Push implements app.Notifier.
func (g Gateways) Push(ctx context.Context, n app.Notification) error {
	ch := domain.Channel(n.SessionID)
	c, ok := g.ByChannel[ch]
	if !ok || c == nil {
		return fmt.Errorf("push to %s: %w: no gateway configured for channel %q", n.SessionID, domain.ErrUnavailable, ch)
	}
	_, err := c.Push(ctx, &gatewayv1.PushRequest{SessionId: n.SessionID, JobId: n.JobID, RetryKey: n.RetryKey,
		Messages: []*commonv1.ReplyMessage{{Text: n.Text, JobId: n.JobID, Images: n.Images}}})
	if err != nil {
		return fmt.Errorf("push to %s: %w", n.SessionID, classify("gateway-"+ch, err))
	}
	return nil
}
