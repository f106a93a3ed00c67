package app

import (
	"context"
	"time"

	"github.com/picoclaw-suite/picoclaw/pkg/llm"
)

// Toolset is the read-only workspace tools of one task (pkg/workspace.Tools).
type Toolset interface {
	Specs() []llm.ToolSpec
	Execute(ctx context.Context, call llm.ToolCall) (string, error)
}

// WithTools lets the worker read the workspace through the executor's read-only view: open
// gives the tools of one task, limits bound each worker call's tool phase (loop.tools).
func WithTools(open func() Toolset, limits llm.ToolLimits) Option {
	return func(r *Router) { r.openTools, r.toolLimits = open, limits }
}

// workerTools opens the tools of one task, or nil when none are configured, they are off or
// the worker model cannot call tools (the offline provider).
func (r *Router) workerTools() Toolset {
	if r.openTools == nil || r.toolLimits.MaxCalls <= 0 || !llm.SupportsTools(r.worker.Provider()) {
		return nil
	}
	return r.openTools()
}

// callWorker makes one worker call: plain, or the tool loop when tools is set, whose time
// budget is at most half of what is left of the loop so the answer fits in the rest. It
// returns the answer and how many tools ran.
func (r *Router) callWorker(ctx context.Context, req llm.Request, tools Toolset, left time.Duration) (*llm.Response, int, error) {
	if tools == nil {
		resp, err := r.worker.Chat(ctx, req)
		return resp, 0, err
	}
	lim := r.toolLimits
	if half := left / 2; lim.MaxDuration <= 0 || lim.MaxDuration > half {
		lim.MaxDuration = half
	}
	run, err := llm.RunTools(ctx, r.worker, req, llm.Toolbox{Specs: tools.Specs(), Execute: tools.Execute, Limits: lim, Logger: r.log, Now: r.now})
	if err != nil {
		return nil, 0, err
	}
	return run.Response, run.ToolCalls, nil
}
