package heartbeat

import (
	"context"

	"github.com/picoclaw-suite/picoclaw/pkg/jobid"
	"github.com/picoclaw-suite/picoclaw/pkg/llm"
)

// TrackLLM makes every call of c a task of agent a: the agent is busy with the call's JobID
// while the model works, and a provider error becomes the agent's last error.
func TrackLLM(a *Agent, c llm.Client) llm.Client {
	if a == nil || c == nil {
		return c
	}
	return &trackedClient{Client: c, agent: a}
}

type trackedClient struct {
	llm.Client
	agent *Agent
}

func (t *trackedClient) Chat(ctx context.Context, req llm.Request) (*llm.Response, error) {
	task := t.agent.Begin(jobid.FromContext(ctx))
	res, err := t.Client.Chat(ctx, req)
	task.End(err)
	return res, err
}
