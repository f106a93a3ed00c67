package peers

import (
	"context"
	"errors"
	"testing"

	gatewayv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/gateway/v1"
	"github.com/picoclaw-suite/picoclaw/gen/picoclaw/gateway/v1/gatewayv1connect"
	"github.com/picoclaw-suite/picoclaw/services/chat-mio/internal/app"
	"github.com/picoclaw-suite/picoclaw/services/chat-mio/internal/domain"
)

type recorder struct {
	gatewayv1connect.UnimplementedNotificationServiceHandler
	got []string
}

func (r *recorder) Push(_ context.Context, req *gatewayv1.PushRequest) (*gatewayv1.PushResponse, error) {
	if len(req.GetMessages()) != 1 || req.GetMessages()[0].GetText() != "hi" {
		return nil, errors.New("message lost")
	}
	r.got = append(r.got, req.GetSessionId())
	return &gatewayv1.PushResponse{Delivered: 1}, nil
}

func TestPushGoesToTheSessionsGateway(t *testing.T) {
	line, slack := &recorder{}, &recorder{}
	g := Gateways{ByChannel: map[string]gatewayv1connect.NotificationServiceClient{"line": line, "slack": slack}}
	for _, sid := range []string{"line:U1", "slack:C1:1.2"} {
		if err := g.Push(context.Background(), app.Notification{SessionID: sid, Text: "hi"}); err != nil {
			t.Fatal(err)
		}
	}
	if len(line.got) != 1 || line.got[0] != "line:U1" || len(slack.got) != 1 || slack.got[0] != "slack:C1:1.2" {
		t.Fatalf("line %v slack %v", line.got, slack.got)
	}
	if err := g.Push(context.Background(), app.Notification{SessionID: "cli:me"}); !errors.Is(err, domain.ErrUnavailable) {
		t.Fatalf("cli without gateway: %v", err)
	}
}
