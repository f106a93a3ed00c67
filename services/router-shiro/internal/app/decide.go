package app

import (
	"context"
	"errors"
	"log/slog"
	"strings"

	"github.com/picoclaw-suite/picoclaw/pkg/llm"
	"github.com/picoclaw-suite/picoclaw/services/router-shiro/internal/domain"
)

// Outcome is a routing decision with what the caller needs to act on it.
type Outcome struct {
	Decision domain.Decision
	// Refusal is non-empty when the route may not run (CODE under local_only) and tells the user
	// how to lift it.
	Refusal string
	// TaskText is the message without a leading command.
	TaskText string
	// Deliberation is set for /deliberate.
	Deliberation bool
	// Classifier holds the classifier's answer when it was asked (even if rejected).
	Classifier *ClassifierTrace
}

// ClassifierTrace records the classifier call for the final.route log.
type ClassifierTrace struct {
	Route      domain.Route
	Confidence float64
	Failure    domain.ClassifierFailure
}

// Decide runs the decision order: explicit command → channel policy → rule dictionary →
// cheap signals (plain conversation, no model call) → classifier → CHAT fallback, then the
// local_only check.
//
// A command beats the channel's forced route because it is the user's explicit choice;
// forced_route replaces the automatic steps (rules and classifier) only.
func (r *Router) Decide(ctx context.Context, in Input) Outcome {
	out := Outcome{TaskText: strings.TrimSpace(in.Text)}
	if cmd, ok := domain.ParseCommand(in.Text); ok {
		out.TaskText = cmd.Text
		out.Deliberation = cmd.Kind == domain.CommandDeliberate
		out.Decision = domain.Decision{Route: cmd.Route, Source: domain.SourceCommand, Confidence: 1,
			Reason: "explicit command " + cmd.Name, Evidence: []string{cmd.Name}, Matched: cmd.Name}
	} else if forced, ok := r.cfg.ForcedRoutes[in.Channel]; ok && forced != domain.RouteUnspecified {
		out.Decision = domain.Decision{Route: forced, Source: domain.SourceChannelPolicy, Confidence: 1,
			Reason: "channels." + in.Channel + ".forced_route", Matched: "channels." + in.Channel + ".forced_route"}
	} else if dec, ok := r.rules.Decide(in.Text); ok {
		out.Decision = dec
	} else if dec, ok := domain.Signals(in.Text, in.PrevRoute); ok && r.cfg.SignalsEnabled {
		out.Decision = dec
	} else if r.cfg.ClassifierEnabled {
		out.Decision, out.Classifier = r.classify(ctx, in)
	} else {
		out.Decision = domain.Fallback("no command or rule matched; classifier disabled")
	}
	if in.LocalOnly && (out.Decision.Route.IsCode() || out.Deliberation) {
		out.Refusal = localOnlyRefusal(r.locale(in))
	} else if out.Deliberation && !r.cfg.DeliberationEnabled {
		out.Refusal = deliberationOffRefusal(r.locale(in))
	}
	// Values from closed sets (validated job id and channel, routes, sources, rule names) are
	// logged as labels, which the secret masker leaves alone; text that quotes the user (reason,
	// classifier evidence) stays a string and is masked. This halves the cost of a decision
	// (see BenchmarkDecide_RuleHit).
	evidence := slog.String("evidence", strings.Join(out.Decision.Evidence, ", "))
	if out.Decision.Source != domain.SourceClassifier {
		// Rule labels and command names are ours; only the classifier quotes the user.
		evidence = slog.Any("evidence", label(strings.Join(out.Decision.Evidence, ", ")))
	}
	attrs := []slog.Attr{
		slog.Any("job_id", label(in.JobID)),
		slog.Any("source", label(string(out.Decision.Source))),
		slog.Any("route", label(string(out.Decision.Route))),
		slog.Float64("confidence", out.Decision.Confidence),
		slog.String("reason", out.Decision.Reason),
		evidence,
		slog.Any("matched", label(out.Decision.Matched)),
		slog.Any("channel", label(in.Channel)),
		slog.Bool("local_only", in.LocalOnly),
		slog.Bool("deliberation", out.Deliberation),
		slog.Bool("refused", out.Refusal != ""),
	}
	r.log.LogAttrs(ctx, slog.LevelInfo, "router.decision", attrs...)
	r.metrics.Decision(string(out.Decision.Source), string(out.Decision.Route))
	return out
}

func deliberationOffRefusal(locale string) string {
	if locale == "en" {
		return "Deliberation (/deliberate) is switched off here (deliberation.enabled: false). Send the task with /code to ask one coder."
	}
	return "熟議（/deliberate）はこの環境では無効です（deliberation.enabled: false）。/code で依頼すると 1 人のコーダーに頼めます。"
}

// classifierInputRunes bounds what the classifier reads: the head of a long paste decides its
// category as well as the whole, and the local model's context stays small.
const classifierInputRunes = 4000

func truncateRunes(s string, n int) string {
	if len(s) <= n {
		return s
	}
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n])
}

func localOnlyRefusal(locale string) string {
	if locale == "en" {
		return "Local-only mode is on, so this request cannot go to a cloud coder (CODE routes and /deliberate). Send /cloud to lift local-only mode, then ask again."
	}
	return "ローカル専用モード（local_only）のため、この依頼はクラウドのコーダー（CODE ルート・/deliberate）に送れません。/cloud と送るとローカル専用モードを解除できます。解除後にもう一度お願いします。"
}

// classify makes the one classifier call for this input and applies the thresholds; every
// failure falls back to CHAT and is logged as classifier.error.
func (r *Router) classify(ctx context.Context, in Input) (domain.Decision, *ClassifierTrace) {
	req := llm.Request{
		Messages: []llm.Message{
			{Role: llm.RoleSystem, Content: classifierPrompt},
			{Role: llm.RoleUser, Content: truncateRunes(in.Text, classifierInputRunes)},
		},
		JSON:      true,
		Contract:  llm.ContractClassifier,
		MaxTokens: 256,
		Timeout:   r.cfg.ClassifierTimeout,
	}
	trace := &ClassifierTrace{}
	cctx := ctx
	if r.cfg.ClassifierTimeout > 0 {
		// The whole call, a wait for the model's turn included (llm max_parallel): a classifier
		// queued behind the worker's calls falls back to CHAT rather than hold the answer.
		var cancel context.CancelFunc
		cctx, cancel = context.WithTimeout(ctx, r.cfg.ClassifierTimeout)
		defer cancel()
	}
	resp, err := r.worker.Chat(cctx, req)
	if err != nil {
		failure := domain.ClassifierCallFailed
		if errors.Is(err, llm.ErrTimeout) || errors.Is(err, context.DeadlineExceeded) {
			failure = domain.ClassifierTimeout
		}
		trace.Failure = failure
		return r.classifierFallback(ctx, in, &domain.ClassifierError{Failure: failure, Detail: err.Error()}), trace
	}
	answer, err := domain.ParseClassifierAnswer(resp.Text)
	if err == nil {
		trace.Route, trace.Confidence = answer.Route, answer.Confidence
		var dec domain.Decision
		if dec, err = answer.Accept(r.cfg.Thresholds); err == nil {
			return dec, trace
		}
	}
	var ce *domain.ClassifierError
	if errors.As(err, &ce) {
		trace.Failure = ce.Failure
		if ce.Route != "" {
			trace.Route, trace.Confidence = ce.Route, ce.Confidence
		}
	}
	return r.classifierFallback(ctx, in, err), trace
}

func (r *Router) classifierFallback(ctx context.Context, in Input, err error) domain.Decision {
	attrs := []slog.Attr{jobAttr(in), slog.String("error", err.Error())}
	var ce *domain.ClassifierError
	if errors.As(err, &ce) {
		attrs = append(attrs, slog.String("reason", string(ce.Failure)), slog.String("detail", ce.Detail))
		if ce.Route != "" {
			attrs = append(attrs, slog.String("classifier_route", string(ce.Route)), slog.Float64("classifier_confidence", ce.Confidence))
		}
	}
	attrs = append(attrs, slog.String("provider", r.worker.Provider()), slog.String("model", r.worker.Model()))
	r.log.LogAttrs(ctx, slog.LevelWarn, "classifier.error", attrs...)
	if ce != nil {
		r.metrics.ClassifierError(string(ce.Failure))
	}
	reason := "classifier rejected: " + err.Error()
	if ce != nil {
		reason = "classifier " + string(ce.Failure) + ": " + ce.Detail
	}
	return domain.Fallback(reason)
}
