package app

import (
	"context"

	"github.com/picoclaw-suite/picoclaw/pkg/llm"
)

// ToolSession is the read-only workspace tools of one proposal (pkg/workspace.Tools).
type ToolSession interface {
	Specs() []llm.ToolSpec
	Execute(ctx context.Context, call llm.ToolCall) (string, error)
	// Seen maps each file read to the sha256 of the whole file at that read.
	Seen() map[string]string
}

// toolsFor opens the tools of one proposal by o: nil when no workspace tools are configured,
// tools are off (max_calls 0) or o's provider cannot call tools (the offline provider). The
// limits keep the tool phase within half the approval limits, which leaves the final answer
// and a repair room below them.
func (p *Proposer) toolsFor(o Order) (ToolSession, llm.ToolLimits) {
	lim := p.toolLimits
	if p.tools == nil || lim.MaxCalls <= 0 || !llm.SupportsTools(o.Client.Provider()) {
		return nil, lim
	}
	if half := p.limits.Tokens / 2; half > 0 && (lim.MaxTokens <= 0 || lim.MaxTokens > half) {
		lim.MaxTokens = half
	}
	if p.limits.CostUSD > 0 {
		lim.MaxCostUSD, lim.Price = p.limits.CostUSD/2, o.Price
	}
	return p.tools(), lim
}

// ask makes the first call of a proposal: one call, or the tool loop when s is set. It returns
// the answer and the conversation it answers (the tool calls and results included).
func (p *Proposer) ask(ctx context.Context, o Order, req llm.Request, s ToolSession, lim llm.ToolLimits) (*llm.Response, []llm.Message, int, error) {
	if s == nil {
		resp, err := o.Client.Chat(ctx, req)
		return resp, req.Messages, 0, err
	}
	run, err := llm.RunTools(ctx, o.Client, req, llm.Toolbox{Specs: s.Specs(), Execute: s.Execute, Limits: lim, Logger: p.log})
	if err != nil {
		return nil, nil, 0, err
	}
	return run.Response, run.Messages, run.ToolCalls, nil
}
