package domain

import "errors"

// Sentinel errors; internal/rpc maps them to Connect codes.
var (
	// ErrInvalid: the input or a model answer does not meet its contract.
	ErrInvalid = errors.New("invalid")
	// ErrPermission: the session's policy forbids what was asked (CODE under local_only).
	ErrPermission = errors.New("permission denied")
	// ErrUnavailable: a peer (worker model, coder-order) could not be reached.
	ErrUnavailable = errors.New("unavailable")
)
