package app

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"sync"
	"time"

	"github.com/picoclaw-suite/picoclaw/pkg/jobid"
	"github.com/picoclaw-suite/picoclaw/pkg/llm"
	"github.com/picoclaw-suite/picoclaw/services/coder-order/internal/domain"
)

// Order is one configured order as the use cases see it.
type Order struct {
	ID      string
	Alias   string
	Enabled bool
	// Client is nil when the order could not be built; Unavailable says why.
	Client      llm.Client
	Unavailable error
	// Price is the model's price; HasPrice is false for free local models.
	Price    llm.Price
	HasPrice bool
	// MaxTokens caps each answer.
	MaxTokens int
}

// Limits are the cost and token limits above which a call needs approval first.
type Limits struct {
	CostUSD float64
	Tokens  int64
	// NearFraction of a limit marks cost_hint.near_limit (default 0.8).
	NearFraction float64
}

// Proposer runs the proposal use cases.
type Proposer struct {
	orders       map[string]Order
	defaultOrder string
	limits       Limits
	maxParallel  int
	delibTimeout time.Duration
	check        domain.PatchCheck
	workspace    Workspace
	contextTok   int64
	tools        func() ToolSession
	toolLimits   llm.ToolLimits
	log          *slog.Logger
}

// Config builds a Proposer.
type Config struct {
	Orders              []Order
	DefaultOrder        string
	Limits              Limits
	MaxParallel         int
	DeliberationTimeout time.Duration
	// PatchCheck defaults to domain.ParsePatch.
	PatchCheck domain.PatchCheck
	// Workspace is the executor's read-only view; nil = proposals without repository context.
	Workspace Workspace
	// ContextTokens is the budget of the context pack (default 8000; capped at half the token
	// limit when one is set).
	ContextTokens int64
	// Tools opens the read-only workspace tools of one proposal; nil = no tools. Orders whose
	// provider calls tools use them after the context pack, within ToolLimits
	// (coders.tools; MaxCalls 0 turns them off).
	Tools      func() ToolSession
	ToolLimits llm.ToolLimits
	Logger     *slog.Logger
}

// NewProposer returns a Proposer.
func NewProposer(c Config) *Proposer {
	p := &Proposer{
		orders: map[string]Order{}, defaultOrder: c.DefaultOrder, limits: c.Limits,
		maxParallel: c.MaxParallel, delibTimeout: c.DeliberationTimeout, check: c.PatchCheck, log: c.Logger,
		workspace: c.Workspace, contextTok: c.ContextTokens, tools: c.Tools, toolLimits: c.ToolLimits,
	}
	if p.contextTok <= 0 {
		p.contextTok = 8000
	}
	if p.limits.Tokens > 0 && p.contextTok > p.limits.Tokens/2 {
		p.contextTok = p.limits.Tokens / 2
	}
	for _, o := range c.Orders {
		p.orders[o.ID] = o
	}
	if p.check == nil {
		p.check = domain.ParsePatch
	}
	if p.log == nil {
		p.log = slog.New(slog.DiscardHandler)
	}
	if p.limits.NearFraction <= 0 {
		p.limits.NearFraction = 0.8
	}
	if p.maxParallel <= 0 {
		p.maxParallel = len(domain.Orders)
	}
	if p.delibTimeout <= 0 {
		p.delibTimeout = 120 * time.Second
	}
	return p
}

// Propose asks one order for a proposal. The job id comes from the baggage of ctx (falling
// back to task.JobID).
func (p *Proposer) Propose(ctx context.Context, orderName string, task Task) (*domain.Proposal, error) {
	id, err := domain.NormalizeOrder(orderName, p.defaultOrder)
	if err != nil {
		return nil, err
	}
	o, ok := p.orders[id]
	switch {
	case !ok || !o.Enabled:
		return nil, fmt.Errorf("%s: %w", id, domain.ErrOrderDisabled)
	case o.Client == nil:
		return nil, fmt.Errorf("%s: %w: %w", id, domain.ErrOrderUnavailable, o.Unavailable)
	case strings.TrimSpace(task.Text) == "":
		return nil, fmt.Errorf("%s: %w", id, domain.ErrInvalidTask)
	case task.LocalOnly && o.Client.Cloud():
		// Safety net: the router refuses CODE routes under local_only already.
		return nil, fmt.Errorf("%s (%s): %w", id, o.Client.Provider(), domain.ErrLocalOnly)
	}
	if j := jobid.FromContext(ctx); j != "" {
		task.JobID = j
	}

	var pack ContextPack
	if p.workspace != nil {
		pack, err = BuildContextPack(ctx, p.workspace, task, p.contextTok)
		if err != nil {
			// A proposal without context is still a proposal; its base is read below.
			p.log.WarnContext(ctx, "coder.context_unavailable", slog.String("order", id), slog.String("error", err.Error()))
			pack = ContextPack{}
		} else {
			logPack(ctx, p.log, id, pack)
		}
	}
	tools, toolLimits := p.toolsFor(o)
	maxToolCalls := 0
	if tools != nil {
		maxToolCalls = toolLimits.MaxCalls
	}
	msgs := buildMessages(id, task, pack.Render(), maxToolCalls)
	promptTokens := llm.EstimateTokens(msgs)
	if tools != nil {
		promptTokens += llm.EstimateToolSpecs(tools.Specs())
	}
	promptCost := o.Price.Cost(llm.Usage{InputTokens: promptTokens})
	// The most the call may cost: the prompt and a full answer.
	est := domain.CostEstimate{Tokens: promptTokens + int64(o.MaxTokens),
		CostUSD: o.Price.Cost(llm.Usage{InputTokens: promptTokens, OutputTokens: int64(o.MaxTokens)})}
	if ((p.limits.CostUSD > 0 && promptCost > p.limits.CostUSD) || (p.limits.Tokens > 0 && promptTokens > p.limits.Tokens)) && !task.confirmedCovers(est) {
		return nil, &domain.DetailError{
			Err:      fmt.Errorf("%s: %w", id, domain.ErrCostOverLimit),
			Detail:   fmt.Sprintf("prompt ≈ %d tokens, ≈ $%.4f; limits %d tokens, $%.2f", promptTokens, promptCost, p.limits.Tokens, p.limits.CostUSD),
			Estimate: &est,
		}
	}
	if task.ConfirmedCostUSD > 0 || task.ConfirmedTokens > 0 {
		p.log.InfoContext(ctx, "coder.cost_confirmed_call", slog.String("order", id), slog.Int64("estimated_tokens", est.Tokens),
			slog.Float64("estimated_cost_usd", est.CostUSD), slog.Float64("confirmed_cost_usd", task.ConfirmedCostUSD))
	}

	req := llm.Request{Messages: msgs, JSON: true, Contract: llm.ContractProposal, MaxTokens: o.MaxTokens, LocalOnly: task.LocalOnly}
	var usage llm.Usage
	var latency time.Duration
	resp, conversation, toolCalls, err := p.ask(ctx, o, req, tools, toolLimits)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", id, err)
	}
	usage, latency = addUsage(usage, resp), latency+resp.Latency
	prop, problems := domain.ParseProposal(resp.Text, p.check)
	repaired := false
	if len(problems) > 0 {
		p.log.WarnContext(ctx, "coder.proposal_invalid", slog.String("order", id), slog.Any("problems", problems), slog.Bool("repair", true))
		req.Messages = append(append(append([]llm.Message(nil), conversation...), llm.Message{Role: llm.RoleAssistant, Content: resp.Text}), repairMessage(problems))
		if tools != nil {
			// The conversation may hold tool calls: the tools stay declared, but the repair is
			// an answer, not more reading.
			req.Tools, req.ToolChoice = tools.Specs(), llm.ToolChoiceNone
		}
		resp, err = o.Client.Chat(ctx, req)
		if err != nil {
			return nil, fmt.Errorf("%s: repair: %w", id, err)
		}
		usage, latency = addUsage(usage, resp), latency+resp.Latency
		prop, problems = domain.ParseProposal(resp.Text, p.check)
		if len(problems) > 0 {
			p.log.WarnContext(ctx, "coder.proposal_invalid", slog.String("order", id), slog.Any("problems", problems), slog.Bool("repair", false))
			return nil, &domain.DetailError{
				Err:    fmt.Errorf("%s: %w after one repair attempt", id, domain.ErrInvalidProposal),
				Detail: strings.Join(problems, "; "),
			}
		}
		repaired = true
	}

	prop.JobID = task.JobID
	shown := pack.Hashes()
	if tools != nil {
		// A file read through the tools was seen after the pack: its hash then is the base.
		for path, sum := range tools.Seen() {
			shown[path] = sum
		}
	}
	p.bindBase(ctx, id, prop, shown)
	prop.Order, prop.Provider, prop.Model = id, resp.Provider, resp.Model
	prop.Usage = domain.Usage{InputTokens: usage.InputTokens, OutputTokens: usage.OutputTokens}
	prop.LatencyMS = latency.Milliseconds()
	prop.Repaired = repaired
	if id == domain.Order3 {
		prop.NeedApproval = true
	}
	tokens := usage.InputTokens + usage.OutputTokens
	cost := o.Price.Cost(usage)
	prop.CostHint = domain.CostHint{
		EstimatedTokens:  tokens,
		EstimatedCostUSD: cost,
		NearLimit: (p.limits.CostUSD > 0 && cost >= p.limits.NearFraction*p.limits.CostUSD) ||
			(p.limits.Tokens > 0 && float64(tokens) >= p.limits.NearFraction*float64(p.limits.Tokens)),
	}
	p.log.InfoContext(ctx, "coder.plan_generated",
		slog.String("job_id", prop.JobID), slog.String("order", id), slog.String("alias", o.Alias),
		slog.String("provider", prop.Provider), slog.String("model", prop.Model),
		slog.Int64("input_tokens", usage.InputTokens), slog.Int64("output_tokens", usage.OutputTokens),
		slog.Float64("cost_usd", cost), slog.Bool("near_limit", prop.CostHint.NearLimit),
		slog.Int64("latency_ms", prop.LatencyMS), slog.Bool("repaired", repaired), slog.String("task_type", prop.TaskType),
		slog.Int("tool_calls", toolCalls),
		slog.Bool("offline", resp.Offline))
	return prop, nil
}

func addUsage(u llm.Usage, r *llm.Response) llm.Usage {
	return llm.Usage{InputTokens: u.InputTokens + r.Usage.InputTokens, OutputTokens: u.OutputTokens + r.Usage.OutputTokens}
}

// Result is one order's outcome in deliberation.
type Result struct {
	Order    string
	Proposal *domain.Proposal
	Err      error
}

// ProposeMany asks the given orders (every enabled one when empty) in parallel, at most
// max_parallel_orders at a time, all bounded by deliberation.timeout_sec, and returns one
// Result per order: a proposal or its error (unknown names first, then in order id order). It
// returns when every order has answered or timed out.
func (p *Proposer) ProposeMany(ctx context.Context, orders []string, task Task) []Result {
	var ids []string
	var results []Result
	if len(orders) == 0 {
		for _, id := range domain.Orders {
			if o, ok := p.orders[id]; ok && o.Enabled {
				ids = append(ids, id)
			}
		}
	} else {
		seen := map[string]bool{}
		for _, name := range orders {
			id, err := domain.NormalizeOrder(name, p.defaultOrder)
			if err != nil {
				results = append(results, Result{Order: name, Err: err})
				continue
			}
			if !seen[id] {
				seen[id] = true
				ids = append(ids, id)
			}
		}
	}
	ctx, cancel := context.WithTimeout(ctx, p.delibTimeout)
	defer cancel()
	p.log.InfoContext(ctx, "deliberation.started", slog.Any("orders", ids), slog.Duration("timeout", p.delibTimeout))

	out := make([]Result, len(ids))
	slots := make(chan struct{}, p.maxParallel)
	var wg sync.WaitGroup
	for i, id := range ids {
		wg.Go(func() {
			var prop *domain.Proposal
			var err error
			select {
			case slots <- struct{}{}:
				prop, err = p.Propose(ctx, id, task)
				<-slots
			case <-ctx.Done():
				err = fmt.Errorf("%s: waiting for a free slot: %w", id, ctx.Err())
			}
			out[i] = Result{Order: id, Proposal: prop, Err: err}
			attrs := []any{slog.String("order", id), slog.String("error_code", domain.Code(err))}
			if prop != nil {
				attrs = append(attrs, slog.Float64("cost_usd", prop.CostHint.EstimatedCostUSD))
			}
			p.log.InfoContext(ctx, "deliberation.proposal_received", attrs...)
		})
	}
	wg.Wait()
	return append(results, out...)
}
