package config

import (
	"errors"
	"fmt"
	"strings"
)

// Errors collects validation problems, each naming its key, so a user sees all of them at once.
type Errors struct {
	list []error
}

// Addf records a problem with the key.
func (e *Errors) Addf(key, format string, args ...any) {
	e.list = append(e.list, &KeyError{Key: key, Msg: fmt.Sprintf(format, args...)})
}

// Add records an error that already names its key (e.g. from a nested Validate).
func (e *Errors) Add(err error) {
	if err != nil {
		e.list = append(e.list, err)
	}
}

// Err returns nil when nothing was recorded.
func (e *Errors) Err() error {
	if len(e.list) == 0 {
		return nil
	}
	return errors.Join(e.list...)
}

// KeyError is one invalid key.
type KeyError struct {
	Key string
	Msg string
}

func (e *KeyError) Error() string { return e.Key + ": " + e.Msg }

// Prefix returns err with every KeyError's key prefixed by section (used by nested configs).
func Prefix(section string, err error) error {
	if err == nil {
		return nil
	}
	var out []error
	for _, e := range unwrapAll(err) {
		var ke *KeyError
		if errors.As(e, &ke) {
			out = append(out, &KeyError{Key: section + "." + ke.Key, Msg: ke.Msg})
			continue
		}
		out = append(out, fmt.Errorf("%s: %w", section, e))
	}
	return errors.Join(out...)
}

func unwrapAll(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []error
		for _, e := range j.Unwrap() {
			out = append(out, unwrapAll(e)...)
		}
		return out
	}
	return []error{err}
}

// Secret holds a credential. It prints as a mask in logs, fmt and YAML so it cannot leak by
// accident; call Value to use it.
type Secret string

// Value returns the secret itself.
func (s Secret) Value() string { return string(s) }

// String masks the secret.
func (s Secret) String() string {
	if s == "" {
		return ""
	}
	return "***"
}

// GoString masks the secret in %#v.
func (s Secret) GoString() string { return s.String() }

// MarshalYAML masks the secret.
func (s Secret) MarshalYAML() (any, error) { return s.String(), nil }

// MarshalText masks the secret (JSON and slog use it).
func (s Secret) MarshalText() ([]byte, error) { return []byte(s.String()), nil }

// Set reports whether a value is present.
func (s Secret) Set() bool { return strings.TrimSpace(string(s)) != "" }
