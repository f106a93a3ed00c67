package heartbeat

import (
	"context"

	"github.com/picoclaw-suite/picoclaw/pkg/jobid"
)

// Track makes one model call a task of the agent (it implements llm.Tracker, so
// llm.Tracked(client, agent) wraps a client without this package importing pkg/llm): the agent
// is busy with the call's JobID while the model works, and the call's error becomes the agent's
// last error. A nil agent tracks nothing.
func (a *Agent) Track(ctx context.Context) func(err error) {
	if a == nil {
		return func(error) {}
	}
	task := a.Begin(jobid.FromContext(ctx))
	return task.End
}
