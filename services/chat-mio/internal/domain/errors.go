// Package domain holds chat-mio's rules: session ids and state, command syntax, the prompt
// order and the user-facing texts. It does no I/O.
package domain

import "errors"

// Sentinel errors of chat-mio.
var (
	// ErrInvalid: the request itself is malformed (e.g. an unknown session id form).
	ErrInvalid = errors.New("invalid")
	// ErrUsage: a command was recognised but its arguments are wrong.
	ErrUsage = errors.New("usage")
	// ErrNotFound: the thing referred to does not exist (e.g. no deliberation for a job).
	ErrNotFound = errors.New("not found")
	// ErrUnavailable: a store or peer could not be reached.
	ErrUnavailable = errors.New("unavailable")
)
