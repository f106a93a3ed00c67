package app

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	commonv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/common/v1"
	"github.com/picoclaw-suite/picoclaw/pkg/llm"
	"github.com/picoclaw-suite/picoclaw/pkg/redact"
	"github.com/picoclaw-suite/picoclaw/pkg/telemetry"
	"github.com/picoclaw-suite/picoclaw/services/chat-mio/internal/domain"
)

// converse runs an ordinary message (or a routing command) through router-shiro.
func (a *App) converse(ctx context.Context, t *turn, text string) {
	t.task = text
	rctx, cancel := context.WithTimeout(ctx, a.cfg.RouterTimeout)
	res, err := a.peers.Router.Route(rctx, RouteRequest{
		JobID: t.jobID, SessionID: t.sess.ID, Channel: t.actor.Channel, Text: text, LocalOnly: t.sess.LocalOnly,
		PrevRoute: t.sess.PrevPrimaryRoute, History: t.sess.Memory, Locale: t.loc, Confirmed: t.confirmed,
	})
	cancel()
	if err != nil {
		a.log.ErrorContext(ctx, "router.failed", slog.String("kind", errKind(err)), slog.Any("error", err))
		if errors.Is(err, domain.ErrUnavailable) {
			// Transient: the turn fails without an answer, so the gateway keeps the event and
			// tries again (and the user is not told to resend what is already being retried).
			t.fail(fmt.Errorf("route: %w", err))
			return
		}
		t.say(domain.T(t.loc, domain.MsgRouterDown))
		return
	}
	t.result.Decision = decisionProto(res.Decision)
	route := res.FinalRoute
	if route == "" {
		route = res.Decision.Route
	}
	if route == "" {
		route = "CHAT"
	}
	// A plain chat turn's route is in router-shiro's router.decision line already.
	level := slog.LevelInfo
	if route == "CHAT" && t.sess.PrevPrimaryRoute == "CHAT" && !res.Deliberation && len(res.Proposals) == 0 {
		level = slog.LevelDebug
	}
	a.log.Log(ctx, level, "chat.route", slog.String("route", route), slog.String("prev_route", t.sess.PrevPrimaryRoute),
		slog.String("source", res.Decision.Source), slog.Bool("deliberation", res.Deliberation),
		slog.Int("proposals", len(res.Proposals)))

	if res.Refusal != "" {
		if t.sess.LocalOnly {
			t.say(domain.T(t.loc, domain.MsgLocalRefusal))
		} else {
			t.say(res.Refusal)
		}
		a.remember(t, text)
		return
	}

	if model, missing, ok := llm.ParseLocalModelReason(res.ErrorReason); ok && len(res.Workers) == 0 {
		// Shiro's local model is missing or down after a restart: the route cannot run.
		a.log.WarnContext(ctx, "chat.worker_model_unavailable", slog.String("route", route), slog.String("model", model), slog.Bool("missing", missing))
		t.say(domain.LocalModelUnavailable(t.loc, true, model, missing))
		a.remember(t, text)
		return
	}

	order := ""
	if ps := res.Proposals; len(ps) == 1 {
		order = ps[0].Order
	}
	deliberation := res.Deliberation || len(res.Proposals) > 1
	decl := domain.Declaration(t.loc, route, t.sess.PrevPrimaryRoute, order, deliberation)
	start := len(t.result.Messages)
	switch {
	case deliberation:
		a.presentOptions(ctx, t, res)
	case strings.HasPrefix(route, "CODE") || len(res.Proposals) == 1:
		a.keepRetry(ctx, t, text, order, route)
		a.proposal(ctx, t, res.Proposals, route)
	case route == "CHAT":
		a.chatReply(ctx, t, text, "", nil, route)
	case route == "PLAN":
		a.chatReply(ctx, t, text, workerText(res.Workers), res.Questions, route)
	default:
		if plain := workerPlain(t.loc, workerText(res.Workers), res.Questions); strings.TrimSpace(plain) != "" {
			t.say(plain)
		} else {
			// A turn never ends with the route declaration alone.
			a.log.WarnContext(ctx, "chat.worker_no_result", slog.String("route", route), slog.Int("worker_calls", len(res.Workers)))
			t.say(domain.T(t.loc, domain.MsgWorkerNoResult))
		}
	}
	if decl != "" && len(t.result.Messages) > start {
		m := t.result.Messages[start]
		m.Text = decl + "\n" + m.Text
	}
	a.rememberRouted(t, text, route)
}

// decisionProto is the route decision in chat-mio's API.
func decisionProto(d Decision) *commonv1.RouteDecision {
	if d.Route == "" && d.Source == "" && d.Confidence == 0 && d.Reason == "" && len(d.Evidence) == 0 && d.Matched == "" {
		return nil
	}
	return &commonv1.RouteDecision{
		Route:      commonv1.Route(commonv1.Route_value["ROUTE_"+strings.ToUpper(d.Route)]),
		Source:     commonv1.DecisionSource(commonv1.DecisionSource_value["DECISION_SOURCE_"+strings.ToUpper(d.Source)]),
		Confidence: d.Confidence, Reason: d.Reason, Evidence: d.Evidence, Matched: d.Matched,
	}
}

// remember has the turn remember the exchange in today's short memory.
func (a *App) remember(t *turn, text string) { a.rememberRouted(t, text, "") }

// rememberRouted is remember and, with route set, the session's new previous primary route. Both
// are written when the turn ends, with its kept reply (record); a degraded session remembers
// nothing.
func (a *App) rememberRouted(t *turn, text, route string) {
	if t.sess.Degraded {
		return
	}
	m := &t.memory
	m.Day, m.MemoryTurns = t.day, a.cfg.MemoryTurns
	if route != "" {
		m.Route = route
	}
	if len(t.result.Messages) == 0 {
		return
	}
	var reply []string
	for _, msg := range t.result.Messages {
		reply = append(reply, msg.GetText())
	}
	m.Turns = append(m.Turns,
		domain.Turn{Role: "user", Text: domain.ClipTurn(text, a.cfg.MemoryClip), At: t.now},
		domain.Turn{Role: "assistant", Text: domain.ClipTurn(strings.Join(reply, "\n"), a.cfg.MemoryClip), At: t.now})
}

// workerText is the worker's final result with its next actions, for the chat prompt.
func workerText(outs []WorkerOutput) string {
	if len(outs) == 0 {
		return ""
	}
	last := outs[len(outs)-1]
	s := last.Result
	if len(last.NextActions) > 0 {
		s += "\n- " + strings.Join(last.NextActions, "\n- ")
	}
	return s
}

// workerPlain shows a worker route's result as it is, with the questions for the user.
func workerPlain(l domain.Locale, worker string, questions []string) string {
	s := worker
	if len(questions) > 0 {
		s = strings.TrimSpace(s + "\n\n" + domain.T(l, domain.MsgQuestions) + "\n- " + strings.Join(questions, "\n- "))
	}
	return s
}

// chatReply has Mio's chat model write the reply, prompt persona → policy → overlay.
func (a *App) chatReply(ctx context.Context, t *turn, text, worker string, questions []string, route string) {
	policy := a.cfg.Policy
	if policy == "" {
		policy = domain.DefaultPolicy(t.loc)
	}
	system := domain.SystemPrompt(a.cfg.Persona, policy, domain.Overlay{
		Locale: t.loc, JobID: t.jobID, Route: route, LocalOnly: t.sess.LocalOnly, Pending: t.sess.Pending,
		Now: t.now.In(a.cfg.Location).Format("2006-01-02 15:04 MST"), WorkerResult: worker, Questions: questions,
		Note: t.sess.Note,
	})
	msgs := make([]llm.Message, 0, len(t.sess.Memory)+2)
	msgs = append(msgs, llm.Message{Role: llm.RoleSystem, Content: system})
	for _, m := range t.sess.Memory {
		role := llm.RoleUser
		if m.Role == "assistant" {
			role = llm.RoleAssistant
		}
		msgs = append(msgs, llm.Message{Role: role, Content: m.Text})
	}
	msgs = append(msgs, llm.Message{Role: llm.RoleUser, Content: text})
	mctx, span := a.cfg.Tracer.Start(ctx, "chat.model_reply", trace.WithAttributes(
		attribute.String("gen_ai.system", a.model.Provider()), attribute.String("gen_ai.request.model", a.model.Model()),
		attribute.String("route", route)))
	res, err := a.model.Chat(mctx, llm.Request{Messages: msgs, Timeout: a.cfg.ChatTimeout})
	if err == nil && strings.TrimSpace(res.Text) == "" {
		err = fmt.Errorf("%w: empty answer", llm.ErrBadResponse)
	}
	if err != nil {
		span.RecordError(err)
		span.SetStatus(codes.Error, "chat model failed")
	} else {
		span.SetAttributes(attribute.Int64("gen_ai.usage.input_tokens", res.Usage.InputTokens), attribute.Int64("gen_ai.usage.output_tokens", res.Usage.OutputTokens))
	}
	span.End()
	if err != nil {
		a.log.ErrorContext(ctx, "chat.model_failed", slog.String("provider", a.model.Provider()),
			slog.String("model", a.model.Model()), slog.Any("error", err))
		if worker != "" {
			t.say(domain.T(t.loc, domain.MsgWorkerResultPlain) + "\n" + workerPlain(t.loc, worker, questions))
			return
		}
		if lme, ok := errors.AsType[*llm.LocalModelError](err); ok {
			// Missing, or still down after the restart: someone has to act, so the user is told
			// what to run instead of the turn being retried.
			t.say(domain.LocalModelUnavailable(t.loc, false, lme.Model, lme.Missing))
			return
		}
		if errors.Is(err, llm.ErrUnavailable) || errors.Is(err, llm.ErrRateLimited) {
			// Transient (the model's server unreachable or answering 5xx/429): the turn fails
			// without an answer and the gateway tries the event again later, as for the router.
			// A model that is too slow or missing is told: retrying would not change it.
			t.fail(fmt.Errorf("chat model: %w: %w", domain.ErrUnavailable, err))
			return
		}
		t.say(domain.T(t.loc, domain.MsgChatModelDown, a.model.Provider()+"/"+a.model.Model()))
		return
	}
	// llm.call already logged the call (provider, model, tokens, latency) at info.
	a.log.DebugContext(ctx, "chat.model_reply", slog.String("provider", res.Provider), slog.String("model", res.Model),
		slog.Int64("input_tokens", res.Usage.InputTokens), slog.Int64("output_tokens", res.Usage.OutputTokens),
		slog.Int64("latency_ms", res.Latency.Milliseconds()))
	t.say(strings.TrimSpace(res.Text))
}

// proposal sends a coder's proposal to approval.
func (a *App) proposal(ctx context.Context, t *turn, results []ProposalOption, route string) {
	if len(results) == 1 && results[0].Proposal == nil && results[0].ErrorCode == "cost_over_limit" && results[0].Estimate != nil {
		a.askCost(ctx, t, results[0], route)
		return
	}
	if len(results) == 0 || results[0].Proposal == nil {
		reason, code := "no proposal", ""
		if len(results) > 0 {
			code = results[0].ErrorCode
			reason = redact.Secrets(strings.TrimSpace(results[0].ErrorCode + " " + results[0].ErrorMessage))
		}
		a.log.WarnContext(ctx, "chat.no_proposal", slog.String("reason", reason))
		t.say(domain.T(t.loc, domain.MsgNoProposal, domain.ProposalFailure(t.loc, code)))
		return
	}
	p := *results[0].Proposal
	if route == "CODE" {
		// The default order answered; record the concrete route so Auto-Approve routes= scopes match it.
		if r := orderRoute(p.Order); r != "" {
			route = r
		}
	}
	a.requestApproval(ctx, t, p, route)
}

func orderRoute(order string) string {
	return map[string]string{"order1": "CODE1", "order2": "CODE2", "order3": "CODE3"}[order]
}

// requestApproval asks approval to decide a proposal and acts on the outcome. It fails closed:
// only an auto_approved answer from approval leads to execution.
func (a *App) requestApproval(ctx context.Context, t *turn, p Proposal, route string) {
	if p.Answer {
		// A design, review or analysis without a patch is an answer: there is nothing to approve.
		a.log.InfoContext(ctx, "chat.answer_delivered", slog.String("order", p.Order), slog.String("by", p.By))
		by := p.By
		if by == "" {
			by = p.Order
		}
		t.say(domain.T(t.loc, domain.MsgAnswer, by, t.result.GetJobId(), strings.TrimSpace(p.Plan)))
		a.recordAnswer(ctx, t, p, route)
		return
	}
	id := t.result.GetJobId()
	if !a.stillApplies(ctx, t, id, p) {
		return
	}
	actx, cancel := context.WithTimeout(ctx, a.cfg.ApprovalTimeout)
	res, err := a.peers.Approvals.Request(actx, ProposalInput{JobID: id, SessionID: t.sess.ID, Channel: t.actor.Channel,
		By: t.actor, Route: route, Locale: t.loc, Proposal: p})
	cancel()
	if err != nil {
		a.requestFailed(ctx, t, id, err)
		return
	}
	a.log.InfoContext(ctx, "approval.requested", slog.String("outcome", string(res.Outcome)),
		slog.String("policy_rule", res.PolicyRule))
	switch res.Outcome {
	case OutcomePending:
		if !t.sess.Degraded {
			if err := a.store.AddPending(ctx, t.sess.ID, id); err != nil {
				a.log.WarnContext(ctx, "session.pending_add_failed", slog.Any("error", err))
			}
		}
		text := res.Text
		if text == "" {
			text = domain.T(t.loc, domain.MsgApprovalRequest, id, res.Job.Summary, id, id)
		}
		t.say(text,
			&commonv1.Action{Kind: commonv1.ActionKind_ACTION_KIND_APPROVE, JobId: id, Label: domain.T(t.loc, domain.MsgButtonApprove)},
			&commonv1.Action{Kind: commonv1.ActionKind_ACTION_KIND_DENY, JobId: id, Label: domain.T(t.loc, domain.MsgButtonDeny)},
			&commonv1.Action{Kind: commonv1.ActionKind_ACTION_KIND_APPROVE_SIMILAR, JobId: id, Value: "30m", Label: domain.T(t.loc, domain.MsgButtonSimilar)})
		if res.Text != "" && res.Card != nil {
			t.result.Messages[len(t.result.Messages)-1].Approval = res.Card
		}
	case OutcomeAutoApproved:
		text, async := a.execute(ctx, t, id)
		t.say(domain.T(t.loc, domain.MsgAutoApproved, id) + "\n" + text)
		t.result.AsyncPending = t.result.AsyncPending || async
	case OutcomeRefused:
		// Approval says the reason in the request's locale: a built-in rule's in the user's
		// language, an operator's rule's in its author's words.
		reason := domain.OneLine(res.Reason, 300)
		if reason == "" {
			reason = res.PolicyRule
		}
		t.say(domain.T(t.loc, domain.MsgApprovalRefused, id, reason))
	default:
		a.log.ErrorContext(ctx, "approval.unknown_outcome", slog.String("outcome", string(res.Outcome)))
		t.say(domain.T(t.loc, domain.MsgPeerFailed, "approval"))
	}
}

// recordAnswer has approval record the answer as completed without execution, so the audit
// log holds every job. The user already has the answer: a failure here is logged, not told.
func (a *App) recordAnswer(ctx context.Context, t *turn, p Proposal, route string) {
	actx, cancel := context.WithTimeout(ctx, a.cfg.ApprovalTimeout)
	defer cancel()
	res, err := a.peers.Approvals.Request(actx, ProposalInput{JobID: t.result.GetJobId(), SessionID: t.sess.ID, Channel: t.actor.Channel,
		By: t.actor, Route: route, Locale: t.loc, Proposal: p, AnswerOnly: true})
	if err != nil {
		a.log.WarnContext(ctx, "chat.answer_not_recorded", slog.String("kind", errKind(err)), slog.Any("error", err))
		return
	}
	a.log.InfoContext(ctx, "chat.answer_recorded", slog.String("outcome", string(res.Outcome)))
}

// options are a deliberation's proposals, kept for /pick.
type options struct {
	Proposals []ProposalOption `json:"proposals"`
	// Trace is the deliberation job's trace (W3C traceparent): a typed /pick joins it.
	Trace string `json:"trace,omitempty"`
}

// presentOptions shows deliberation proposals with pick buttons and keeps them for /pick.
func (a *App) presentOptions(ctx context.Context, t *turn, res RouteResult) {
	opts := options{Trace: telemetry.TraceParent(ctx)}
	var lines []string
	var actions []*commonv1.Action
	n := 0
	for _, pr := range res.Proposals {
		if pr.Proposal == nil {
			// The coder's message may carry the provider's own words: the log has them, the
			// user the class of the failure.
			a.log.WarnContext(ctx, "chat.proposal_failed", slog.String("order", pr.Order), slog.String("error_code", pr.ErrorCode),
				slog.String("error", redact.Secrets(pr.ErrorMessage)))
			lines = append(lines, domain.T(t.loc, domain.MsgProposalFailed, pr.Order, domain.ProposalFailure(t.loc, pr.ErrorCode)))
			continue
		}
		n++
		opts.Proposals = append(opts.Proposals, pr)
		lines = append(lines, fmt.Sprintf("%d. %s: %s", n, pr.Order, domain.ClipTurn(firstLine(pr.Proposal.Plan), 200)))
		actions = append(actions, &commonv1.Action{Kind: commonv1.ActionKind_ACTION_KIND_PICK, JobId: t.jobID,
			Label: domain.T(t.loc, domain.MsgButtonPick, n), Value: fmt.Sprint(n)})
	}
	if n == 0 {
		t.say(domain.T(t.loc, domain.MsgNoProposal, strings.Join(lines, "; ")))
		return
	}
	data, err := json.Marshal(opts)
	if err == nil && !t.sess.Degraded {
		err = a.store.SaveOptions(ctx, t.jobID, data, a.cfg.OptionsTTL)
	}
	if err != nil || t.sess.Degraded {
		a.log.WarnContext(ctx, "chat.options_not_saved", slog.Any("error", err))
	}
	if c := res.Comparison; c != "" {
		lines = append(lines, "", domain.ClipTurn(c, 500))
	}
	text := domain.T(t.loc, domain.MsgDeliberation, t.jobID, t.jobID) + "\n" + strings.Join(lines, "\n")
	t.say(text, actions...)
}

func firstLine(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		return s[:i]
	}
	return s
}

// pick sends the chosen deliberation proposal to approval as usual.
func (a *App) pick(ctx context.Context, t *turn, id string, n int) {
	ctx = forJob(ctx, t, id)
	data, err := a.store.LoadOptions(ctx, id)
	var opts options
	if err == nil {
		err = json.Unmarshal(data, &opts)
	}
	if err != nil || n > len(opts.Proposals) || opts.Proposals[n-1].Proposal == nil {
		a.log.InfoContext(ctx, "chat.pick_not_found", slog.Int("pick", n), slog.Any("error", err))
		t.say(domain.T(t.loc, domain.MsgPickNotFound, id, n))
		return
	}
	chosen := opts.Proposals[n-1]
	route := orderRoute(chosen.Order)
	if route == "" {
		route = "CODE"
	}
	a.log.InfoContext(ctx, "deliberation.decision", slog.Int("pick", n), slog.String("order", chosen.Order))
	t.result.ActionApplied = true
	a.requestApproval(ctx, t, *chosen.Proposal, route)
}

// stillApplies dry-runs the proposal against the workspace before anyone is asked to approve
// it: a diff that no longer applies, or a file changed since the coder read it, is told at
// once. When the executor cannot answer, approval is asked anyway (the executor checks again
// before it writes).
func (a *App) stillApplies(ctx context.Context, t *turn, id string, p Proposal) bool {
	cctx, cancel := context.WithTimeout(ctx, a.cfg.ApprovalTimeout)
	chk, err := a.peers.Executor.Check(cctx, p, t.loc)
	cancel()
	if err != nil {
		a.log.WarnContext(ctx, "executor.check_failed", slog.String("kind", errKind(err)), slog.Any("error", err))
		return true
	}
	if chk.Applies {
		return true
	}
	a.log.InfoContext(ctx, "chat.proposal_stale", slog.String("order", p.Order))
	t.say(domain.T(t.loc, domain.MsgProposalStale, id, domain.ClipTurn(chk.Text, 600)))
	return false
}

// requestFailed tells the user why approval could not record job id.
func (a *App) requestFailed(ctx context.Context, t *turn, id string, err error) {
	a.log.ErrorContext(ctx, "approval.request_failed", slog.String("kind", errKind(err)), slog.Any("error", err))
	switch {
	case errors.Is(err, domain.ErrUnavailable):
		t.say(domain.T(t.loc, domain.MsgApprovalDown, id))
	case errors.Is(err, domain.ErrInvalid), errors.Is(err, domain.ErrConflict), errors.Is(err, domain.ErrForbidden),
		errors.Is(err, domain.ErrNotFound):
		t.say(domain.T(t.loc, domain.MsgApprovalRejected, id, domain.ClipTurn(domain.PeerText(t.loc, err), 200)))
	default:
		t.say(domain.T(t.loc, domain.MsgApprovalFailed, id))
	}
}
