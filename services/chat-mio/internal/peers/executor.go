package peers

import (
	"context"
	"errors"

	executorv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/executor/v1"
	"github.com/picoclaw-suite/picoclaw/gen/picoclaw/executor/v1/executorv1connect"
	heartbeatv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/heartbeat/v1"
	"github.com/picoclaw-suite/picoclaw/gen/picoclaw/heartbeat/v1/heartbeatv1connect"
	"github.com/picoclaw-suite/picoclaw/services/chat-mio/internal/app"
	"github.com/picoclaw-suite/picoclaw/services/chat-mio/internal/domain"
)

// Executor is the executor service.
type Executor struct {
	Client executorv1connect.ExecutorServiceClient
}

var _ app.Executor = Executor{}

// Execute implements app.Executor.
func (e Executor) Execute(ctx context.Context, jobID string, loc domain.Locale) (app.Execution, error) {
	res, err := e.Client.Execute(ctx, &executorv1.ExecuteRequest{JobId: jobID, Locale: string(loc)})
	if err != nil {
		return app.Execution{}, classify("executor", err)
	}
	r := res.GetResult()
	return app.Execution{Success: r.GetSuccess(), Executed: int(r.GetExecuted()), Failed: int(r.GetFailed()),
		Text: res.GetResultText(), Summary: r.GetSummary(), Images: res.GetImages()}, nil
}

// Check implements app.Executor: the executor's dry run of the proposal's patch. A patch the
// executor refuses (it does not parse, its base changed) or that fails in the dry run does not
// apply; an unreachable executor is an error.
func (e Executor) Check(ctx context.Context, p app.Proposal, loc domain.Locale) (app.Check, error) {
	prop, err := decodeProposal(p)
	if err != nil {
		return app.Check{}, err
	}
	res, err := e.Client.DryRun(ctx, &executorv1.DryRunRequest{Patch: prop.GetPatch(), Locale: string(loc)})
	if err != nil {
		err = classify("executor", err)
		if errors.Is(err, domain.ErrConflict) || errors.Is(err, domain.ErrInvalid) {
			return app.Check{Applies: false, Text: domain.PeerMessage(err)}, nil
		}
		return app.Check{}, err
	}
	if r := res.GetResult(); r.GetFailed() > 0 {
		return app.Check{Applies: false, Text: res.GetResultText()}, nil
	}
	return app.Check{Applies: true}, nil
}

// Heartbeat is the heartbeat service.
type Heartbeat struct {
	Client heartbeatv1connect.HeartbeatServiceClient
}

var _ app.Heartbeat = Heartbeat{}

// Report implements app.Heartbeat.
func (h Heartbeat) Report(ctx context.Context, loc domain.Locale) (string, error) {
	res, err := h.Client.Report(ctx, &heartbeatv1.ReportRequest{Locale: string(loc)})
	if err != nil {
		return "", classify("heartbeat", err)
	}
	return res.GetText(), nil
}
