package domain

import (
	"fmt"
	"strings"
)

// Risk is the worker's own risk assessment.
type Risk string

const (
	RiskLow    Risk = "low"
	RiskMedium Risk = "medium"
	RiskHigh   Risk = "high"
)

// MaxListItems caps next_actions and questions_for_user (SPEC §5).
const MaxListItems = 3

// WorkerOutput is the worker model contract (SPEC §5).
type WorkerOutput struct {
	Result           string
	NeedsNextLoop    bool
	Why              string
	NextActions      []string
	QuestionsForUser []string
	Confidence       float64
	Risk             Risk
	// Fit is optional: nil when the worker did not say.
	Fit            *float64
	SuggestedRoute Route
}

// WorkerError is a worker answer that breaks the contract.
type WorkerError struct {
	Detail string
}

func (e *WorkerError) Error() string { return "invalid worker output: " + e.Detail }
func (e *WorkerError) Unwrap() error { return ErrInvalid }

// ParseWorkerOutput validates the worker's JSON strictly. An invalid answer is a worker failure,
// never a crash.
func ParseWorkerOutput(text string) (WorkerOutput, error) {
	fields, err := decodeObject(text)
	if err != nil {
		return WorkerOutput{}, &WorkerError{Detail: "invalid_json: " + err.Error()}
	}
	var o WorkerOutput
	var risk string
	required := []struct {
		name string
		dst  any
	}{
		{"result", &o.Result}, {"needs_next_loop", &o.NeedsNextLoop}, {"why", &o.Why},
		{"next_actions", &o.NextActions}, {"questions_for_user", &o.QuestionsForUser},
		{"confidence", &o.Confidence}, {"risk", &risk},
	}
	for _, f := range required {
		raw, ok := fields[f.name]
		if !ok {
			return WorkerOutput{}, &WorkerError{Detail: "missing_field: " + f.name}
		}
		if err := decodeStrict(raw, f.dst); err != nil {
			return WorkerOutput{}, &WorkerError{Detail: "wrong_type: " + f.name + ": " + err.Error()}
		}
	}
	if len(o.NextActions) > MaxListItems {
		return WorkerOutput{}, &WorkerError{Detail: fmt.Sprintf("too_many: next_actions has %d items (max %d)", len(o.NextActions), MaxListItems)}
	}
	if len(o.QuestionsForUser) > MaxListItems {
		return WorkerOutput{}, &WorkerError{Detail: fmt.Sprintf("too_many: questions_for_user has %d items (max %d)", len(o.QuestionsForUser), MaxListItems)}
	}
	o.NextActions = nonEmpty(o.NextActions)
	o.QuestionsForUser = nonEmpty(o.QuestionsForUser)
	if o.Confidence < 0 || o.Confidence > 1 {
		return WorkerOutput{}, &WorkerError{Detail: fmt.Sprintf("out_of_range: confidence %g", o.Confidence)}
	}
	switch Risk(strings.ToLower(strings.TrimSpace(risk))) {
	case RiskLow, RiskMedium, RiskHigh:
		o.Risk = Risk(strings.ToLower(strings.TrimSpace(risk)))
	default:
		return WorkerOutput{}, &WorkerError{Detail: "invalid_risk: " + quote(risk)}
	}
	if raw, ok := fields["fit"]; ok && !isNull(raw) {
		var fit float64
		if err := decodeStrict(raw, &fit); err != nil {
			return WorkerOutput{}, &WorkerError{Detail: "wrong_type: fit: " + err.Error()}
		}
		if fit < 0 || fit > 1 {
			return WorkerOutput{}, &WorkerError{Detail: fmt.Sprintf("out_of_range: fit %g", fit)}
		}
		o.Fit = &fit
	}
	if raw, ok := fields["suggested_route"]; ok && !isNull(raw) {
		var s string
		if err := decodeStrict(raw, &s); err != nil {
			return WorkerOutput{}, &WorkerError{Detail: "wrong_type: suggested_route: " + err.Error()}
		}
		if s = strings.TrimSpace(s); s != "" {
			r := Route(strings.ToUpper(s))
			if !r.Valid() {
				return WorkerOutput{}, &WorkerError{Detail: "unknown_route: suggested_route " + quote(s)}
			}
			o.SuggestedRoute = r
		}
	}
	return o, nil
}

func isNull(raw []byte) bool { return strings.TrimSpace(string(raw)) == "null" }

func nonEmpty(in []string) []string {
	var out []string
	for _, s := range in {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}
