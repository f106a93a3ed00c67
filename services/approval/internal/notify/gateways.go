// Package notify delivers approval's requester notices through the gateways' push API.
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
	"github.com/picoclaw-suite/picoclaw/services/approval/internal/app"
	"github.com/picoclaw-suite/picoclaw/services/approval/internal/domain"
)

// Gateways pushes to the gateway that owns a session's channel (line:, slack:, cli:).
type Gateways struct {
	ByChannel map[string]gatewayv1connect.NotificationServiceClient
}

var _ app.Notifier = Gateways{}

// Push implements app.Notifier: a session of a channel without a gateway, and what the gateway
// refuses for good (an unknown session, a message the channel rejects), are domain.ErrInvalid /
// domain.ErrNotFound; anything else is worth another attempt.
func (g Gateways) Push(ctx context.Context, sessionID, jobID, retryKey, text string) error {
	ch, _, _ := strings.Cut(sessionID, ":")
	c := g.ByChannel[ch]
	if c == nil {
		return fmt.Errorf("push to %s: %w: no gateway for channel %q", sessionID, domain.ErrInvalid, ch)
	}
	_, err := c.Push(ctx, &gatewayv1.PushRequest{SessionId: sessionID, JobId: jobID, RetryKey: retryKey,
		Messages: []*commonv1.ReplyMessage{{Text: text, JobId: jobID}}})
	if err == nil {
		return nil
	}
	var ce *connect.Error
	if errors.As(err, &ce) {
		switch ce.Code() {
		case connect.CodeNotFound:
			return fmt.Errorf("push to %s: %w: %s", sessionID, domain.ErrNotFound, ce.Message())
		case connect.CodeInvalidArgument, connect.CodeFailedPrecondition:
			return fmt.Errorf("push to %s: %w: %s", sessionID, domain.ErrInvalid, ce.Message())
		}
	}
	return fmt.Errorf("push to %s: %w", sessionID, err)
}
