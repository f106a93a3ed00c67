package domain

// Source is the step of the decision order that produced a route.
type Source string

const (
	SourceCommand       Source = "command"
	SourceRule          Source = "rule"
	SourceClassifier    Source = "classifier"
	SourceFallback      Source = "fallback"
	SourceChannelPolicy Source = "channel_policy"
	// SourceSignals: cheap signals of the text decided without a model call.
	SourceSignals Source = "signals"
)

// Decision is the routing decision contract (SPEC §4).
type Decision struct {
	Route      Route
	Source     Source
	Confidence float64
	Reason     string
	Evidence   []string
	// Matched names the command or rule that matched.
	Matched string
}

// Fallback is the safe decision when nothing else applies.
func Fallback(reason string) Decision {
	return Decision{Route: RouteChat, Source: SourceFallback, Confidence: 0, Reason: reason}
}
