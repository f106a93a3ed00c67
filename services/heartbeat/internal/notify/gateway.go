// Package notify pushes alerts to the admin session through the gateway that owns its channel.
package notify

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"connectrpc.com/connect"

	commonv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/common/v1"
	gatewayv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/gateway/v1"
	"github.com/picoclaw-suite/picoclaw/gen/picoclaw/gateway/v1/gatewayv1connect"
	"github.com/picoclaw-suite/picoclaw/services/heartbeat/internal/app"
)

// ErrUnsupportedSession is returned for a session whose channel has no gateway.
var ErrUnsupportedSession = errors.New("admin session must start with line: or slack:")

// GatewayURL picks the gateway of the session's channel: line:… → gateway-line, slack:… →
// gateway-slack.
func GatewayURL(session, lineURL, slackURL string) (string, error) {
	switch {
	case strings.HasPrefix(session, "line:") && len(session) > len("line:"):
		return lineURL, nil
	case strings.HasPrefix(session, "slack:") && len(session) > len("slack:"):
		return slackURL, nil
	}
	return "", fmt.Errorf("%w, got %q", ErrUnsupportedSession, session)
}

// Gateway is an app.Notifier over gateway.v1 NotificationService.Push.
type Gateway struct {
	session string
	client  gatewayv1connect.NotificationServiceClient
}

// NewGateway returns a notifier that pushes to session through the gateway at baseURL.
func NewGateway(httpClient connect.HTTPClient, baseURL, session string, opts ...connect.ClientOption) *Gateway {
	return &Gateway{session: session, client: gatewayv1connect.NewNotificationServiceClient(httpClient, baseURL, opts...)}
}

// Notify implements app.Notifier.
func (g *Gateway) Notify(ctx context.Context, a app.Alert) error {
	_, err := g.client.Push(ctx, &gatewayv1.PushRequest{
		SessionId: g.session,
		Messages:  []*commonv1.ReplyMessage{{Text: a.Text}},
		RetryKey:  a.RetryKey,
	})
	if err != nil {
		return fmt.Errorf("push alert for %s to %s: %w", a.AgentID, g.session, err)
	}
	return nil
}
