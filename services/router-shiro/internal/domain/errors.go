package domain

import "github.com/picoclaw-suite/picoclaw/pkg/fault"

// Sentinel errors, classified by pkg/fault; internal/rpc maps them by kind.
var (
	// ErrInvalid: the input or a model answer does not meet its contract.
	ErrInvalid = fault.New(fault.Invalid, "invalid")
	// ErrPermission: the session's policy forbids what was asked (CODE under local_only).
	ErrPermission = fault.New(fault.Permission, "permission denied")
	// ErrUnavailable: a peer (worker model, coder-order) could not be reached.
	ErrUnavailable = fault.New(fault.Unavailable, "unavailable")
)
