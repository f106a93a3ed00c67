package llm

import (
	"fmt"
	"strings"
)

// LocalModelError is a call to a local model that failed in a way someone has to fix: the
// model is not installed on the server, or the server stayed unreachable after restart_command
// ran. It is ErrModelUnavailable, never ErrUnavailable: a caller that defers transient failures
// (and so would ask again and again) tells the user instead.
type LocalModelError struct {
	Model   string
	BaseURL string
	// Missing: the server answered that it has no such model.
	Missing bool
	// Restarted: restart_command ran for this failure or just before it (within its cool-down).
	Restarted bool
	// Err is the failure of the last call, for logs.
	Err error
}

func (e *LocalModelError) Error() string {
	what := "unreachable"
	if e.Missing {
		what = "not installed"
	}
	if e.Restarted {
		what += " after a restart"
	}
	return fmt.Sprintf("local model %s at %s %s: %v", e.Model, e.BaseURL, what, e.Err)
}

// Unwrap makes the error ErrModelUnavailable (and only that class).
func (e *LocalModelError) Unwrap() error { return ErrModelUnavailable }

// reasonPrefix starts the stable short form of a LocalModelError that crosses a service
// boundary (router-shiro's error_reason): "model_unavailable:missing:<model>" or
// "model_unavailable:down:<model>".
const reasonPrefix = "model_unavailable:"

// Reason is the error's stable short form, for a peer to show the user the right message.
func (e *LocalModelError) Reason() string {
	kind := "down"
	if e.Missing {
		kind = "missing"
	}
	return reasonPrefix + kind + ":" + e.Model
}

// ParseLocalModelReason reads a Reason back; ok is false for any other text.
func ParseLocalModelReason(s string) (model string, missing, ok bool) {
	rest, ok := strings.CutPrefix(s, reasonPrefix)
	if !ok {
		return "", false, false
	}
	kind, model, ok := strings.Cut(rest, ":")
	if !ok || (kind != "missing" && kind != "down") || model == "" {
		return "", false, false
	}
	return model, kind == "missing", true
}
