package domain

import (
	"bytes"
	"encoding/json"
	"fmt"
	"strings"
)

// ClassifierFailure names why a classifier answer was not accepted; it is the `reason` of the
// classifier.error log event.
type ClassifierFailure string

const (
	ClassifierCallFailed     ClassifierFailure = "call_failed"
	ClassifierTimeout        ClassifierFailure = "timeout"
	ClassifierInvalidJSON    ClassifierFailure = "invalid_json"
	ClassifierMissingField   ClassifierFailure = "missing_field"
	ClassifierWrongType      ClassifierFailure = "wrong_type"
	ClassifierUnknownRoute   ClassifierFailure = "unknown_route"
	ClassifierOutOfRange     ClassifierFailure = "confidence_out_of_range"
	ClassifierLowConfidence  ClassifierFailure = "low_confidence"
	ClassifierCodeLowConf    ClassifierFailure = "code_low_confidence"
	ClassifierCodeNoEvidence ClassifierFailure = "code_without_evidence"
)

// ClassifierError is a rejected classifier answer.
type ClassifierError struct {
	Failure ClassifierFailure
	Detail  string
	// Route and Confidence are set when the answer parsed but missed a threshold.
	Route      Route
	Confidence float64
}

func (e *ClassifierError) Error() string {
	return fmt.Sprintf("classifier %s: %s", e.Failure, e.Detail)
}

func (e *ClassifierError) Unwrap() error { return ErrInvalid }

// Thresholds are routing.classifier.min_confidence and min_confidence_for_code.
type Thresholds struct {
	MinConfidence        float64
	MinConfidenceForCode float64
}

// ClassifierAnswer is the classifier's JSON: {"route","confidence","reason","evidence"}.
type ClassifierAnswer struct {
	Route      Route
	Confidence float64
	Reason     string
	Evidence   []string
}

// ParseClassifierAnswer validates the answer strictly: exactly one JSON object, every field
// present with its type, a known route and a confidence in [0,1]. Evidence may be a string or
// a list of strings.
func ParseClassifierAnswer(text string) (ClassifierAnswer, error) {
	fields, err := decodeObject(text)
	if err != nil {
		return ClassifierAnswer{}, &ClassifierError{Failure: ClassifierInvalidJSON, Detail: err.Error()}
	}
	var a ClassifierAnswer
	var routeText string
	for _, f := range []struct {
		name string
		dst  any
	}{{"route", &routeText}, {"confidence", &a.Confidence}, {"reason", &a.Reason}} {
		raw, ok := fields[f.name]
		if !ok {
			return ClassifierAnswer{}, &ClassifierError{Failure: ClassifierMissingField, Detail: "missing field " + f.name}
		}
		if err := decodeStrict(raw, f.dst); err != nil {
			return ClassifierAnswer{}, &ClassifierError{Failure: ClassifierWrongType, Detail: f.name + ": " + err.Error()}
		}
	}
	raw, ok := fields["evidence"]
	if !ok {
		return ClassifierAnswer{}, &ClassifierError{Failure: ClassifierMissingField, Detail: "missing field evidence"}
	}
	if a.Evidence, err = decodeEvidence(raw); err != nil {
		return ClassifierAnswer{}, &ClassifierError{Failure: ClassifierWrongType, Detail: "evidence: " + err.Error()}
	}
	r := Route(strings.ToUpper(strings.TrimSpace(routeText)))
	if !r.Valid() {
		return ClassifierAnswer{}, &ClassifierError{Failure: ClassifierUnknownRoute, Detail: "unknown route " + quote(routeText)}
	}
	a.Route = r
	if a.Confidence < 0 || a.Confidence > 1 {
		return ClassifierAnswer{}, &ClassifierError{Failure: ClassifierOutOfRange, Route: r, Confidence: a.Confidence,
			Detail: fmt.Sprintf("confidence %g outside [0,1]", a.Confidence)}
	}
	return a, nil
}

// Accept applies the thresholds: any route needs MinConfidence; a CODE route needs
// MinConfidenceForCode and non-empty evidence.
func (a ClassifierAnswer) Accept(t Thresholds) (Decision, error) {
	if a.Confidence < t.MinConfidence {
		return Decision{}, &ClassifierError{Failure: ClassifierLowConfidence, Route: a.Route, Confidence: a.Confidence,
			Detail: fmt.Sprintf("%s at %g < %g", a.Route, a.Confidence, t.MinConfidence)}
	}
	if a.Route.IsCode() {
		if a.Confidence < t.MinConfidenceForCode {
			return Decision{}, &ClassifierError{Failure: ClassifierCodeLowConf, Route: a.Route, Confidence: a.Confidence,
				Detail: fmt.Sprintf("%s at %g < %g", a.Route, a.Confidence, t.MinConfidenceForCode)}
		}
		if len(a.Evidence) == 0 {
			return Decision{}, &ClassifierError{Failure: ClassifierCodeNoEvidence, Route: a.Route, Confidence: a.Confidence,
				Detail: string(a.Route) + " without evidence"}
		}
	}
	return Decision{Route: a.Route, Source: SourceClassifier, Confidence: a.Confidence, Reason: a.Reason, Evidence: a.Evidence}, nil
}

// decodeObject parses text as exactly one JSON object (surrounding whitespace allowed).
func decodeObject(text string) (map[string]json.RawMessage, error) {
	dec := json.NewDecoder(strings.NewReader(text))
	var fields map[string]json.RawMessage
	if err := dec.Decode(&fields); err != nil {
		return nil, err
	}
	if fields == nil {
		return nil, fmt.Errorf("not a JSON object")
	}
	if strings.TrimSpace(text[dec.InputOffset():]) != "" {
		return nil, fmt.Errorf("trailing data after the JSON object")
	}
	return fields, nil
}

// decodeStrict decodes one JSON value into dst, refusing null (a null is a missing value).
func decodeStrict(raw json.RawMessage, dst any) error {
	if bytes.Equal(bytes.TrimSpace(raw), []byte("null")) {
		return fmt.Errorf("is null")
	}
	return json.Unmarshal(raw, dst)
}

func decodeEvidence(raw json.RawMessage) ([]string, error) {
	var one string
	if err := decodeStrict(raw, &one); err == nil {
		if one = strings.TrimSpace(one); one == "" {
			return nil, nil
		}
		return []string{one}, nil
	}
	var list []string
	if err := decodeStrict(raw, &list); err != nil {
		return nil, fmt.Errorf("must be a string or a list of strings")
	}
	out := list[:0]
	for _, s := range list {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out, nil
}
