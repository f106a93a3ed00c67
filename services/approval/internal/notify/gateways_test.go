package notify

import (
	"context"
	"errors"
	"testing"

	"connectrpc.com/connect"

	gatewayv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/gateway/v1"
	"github.com/picoclaw-suite/picoclaw/gen/picoclaw/gateway/v1/gatewayv1connect"
	"github.com/picoclaw-suite/picoclaw/services/approval/internal/domain"
)

// gatewayAnswering is a gateway client that answers every push with err.
type gatewayAnswering struct {
	gatewayv1connect.NotificationServiceClient
	err  error
	last *gatewayv1.PushRequest
}

func (g *gatewayAnswering) Push(_ context.Context, req *gatewayv1.PushRequest) (*gatewayv1.PushResponse, error) {
	g.last = req
	return &gatewayv1.PushResponse{}, g.err
}

func TestPushClassifiesWhatRetryingCannotFix(t *testing.T) {
	tests := []struct {
		name    string
		session string
		err     error
		want    error // nil: no error; errRetry: an error that is neither invalid nor not found
	}{
		{"delivered", "line:U1", nil, nil},
		{"unknown session", "line:U1", connect.NewError(connect.CodeNotFound, errors.New("no such chat")), domain.ErrNotFound},
		{"refused by the channel", "line:U1", connect.NewError(connect.CodeFailedPrecondition, errors.New("LINE refused")), domain.ErrInvalid},
		{"gateway down", "line:U1", connect.NewError(connect.CodeUnavailable, errors.New("down")), errRetry},
		{"push timed out", "line:U1", connect.NewError(connect.CodeDeadlineExceeded, errors.New("slow")), errRetry},
		{"a channel without a gateway", "teams:X", nil, domain.ErrInvalid},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			gw := &gatewayAnswering{err: tc.err}
			err := Gateways{ByChannel: map[string]gatewayv1connect.NotificationServiceClient{"line": gw}}.
				Push(context.Background(), tc.session, "job_20260101_001", "job_20260101_001:decision", "text")
			switch {
			case tc.want == nil && err != nil:
				t.Fatalf("err = %v", err)
			case tc.want == errRetry && (err == nil || errors.Is(err, domain.ErrInvalid) || errors.Is(err, domain.ErrNotFound)):
				t.Fatalf("err = %v, want one worth retrying", err)
			case tc.want != nil && tc.want != errRetry && !errors.Is(err, tc.want):
				t.Fatalf("err = %v, want %v", err, tc.want)
			}
			if tc.session == "line:U1" && (gw.last.GetRetryKey() != "job_20260101_001:decision" || gw.last.GetJobId() != "job_20260101_001" ||
				gw.last.GetMessages()[0].GetText() != "text") {
				t.Errorf("request %v", gw.last)
			}
		})
	}
}

var errRetry = errors.New("retry")
