package domain

import "time"

// StopReason tells why the worker loop ended (SPEC §5).
type StopReason string

const (
	StopDone                 StopReason = "done"
	StopMaxLoops             StopReason = "max_loops"
	StopMaxMillis            StopReason = "max_millis"
	StopWorkerFailure        StopReason = "worker_failure"
	StopNeedUserConfirmation StopReason = "need_user_confirmation"
)

// Reroute thresholds of SPEC §5: a worker may move the task to another route once per input
// when it says the current route fits badly and is confident about the better one.
const (
	RerouteMaxFit        = 0.3
	RerouteMinConfidence = 0.8
)

// LoopLimits are loop.max_loops, loop.max_millis and loop.min_confidence.
type LoopLimits struct {
	MaxLoops  int
	MaxMillis time.Duration
	// MinConfidence: a worker that wants another loop with less confidence than this is at a
	// major branch it should not take alone, so the user is asked.
	MinConfidence float64
}

// LoopState is what the loop has done so far for one input.
type LoopState struct {
	Route       Route
	Calls       int
	RerouteUsed bool
	Elapsed     time.Duration
	LocalOnly   bool
}

// RerouteTarget returns the route the output asks to move to, if the reroute rule allows it:
// not used yet, fit < 0.3, a valid route different from the current one, confidence ≥ 0.8, and
// not a cloud route when the session is local_only.
func RerouteTarget(s LoopState, o WorkerOutput) (Route, bool) {
	if s.RerouteUsed || o.Fit == nil || *o.Fit >= RerouteMaxFit {
		return "", false
	}
	r := o.SuggestedRoute
	if !r.Valid() || r == s.Route || o.Confidence < RerouteMinConfidence {
		return "", false
	}
	if r.IsCode() && s.LocalOnly {
		return "", false
	}
	return r, true
}

// NeedsConfirmation reports whether the user must be asked before going on: high risk,
// open questions (missing information), or a low-confidence step on a major branch.
func NeedsConfirmation(o WorkerOutput, l LoopLimits) bool {
	return o.Risk == RiskHigh || len(o.QuestionsForUser) > 0 || (o.NeedsNextLoop && o.Confidence < l.MinConfidence)
}

// NextStop decides, after a valid worker output, whether the loop stops and why. A reroute is
// checked by the caller before this.
func NextStop(s LoopState, o WorkerOutput, l LoopLimits) (StopReason, bool) {
	switch {
	case NeedsConfirmation(o, l):
		return StopNeedUserConfirmation, true
	case !o.NeedsNextLoop:
		return StopDone, true
	case s.Calls >= l.MaxLoops:
		return StopMaxLoops, true
	case s.Elapsed >= l.MaxMillis:
		return StopMaxMillis, true
	}
	return "", false
}
