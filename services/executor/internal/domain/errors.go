// Package domain holds the executor's types, invariants and sentinel errors. It does no I/O.
package domain

import "github.com/picoclaw-suite/picoclaw/pkg/fault"

// Sentinel errors, classified by pkg/fault; internal/rpc maps them by kind.
var (
	ErrInvalid  = fault.New(fault.Invalid, "invalid")
	ErrNotFound = fault.New(fault.NotFound, "not found")
	// ErrConflict: the job is not in a state that allows this (claimed elsewhere, decided).
	ErrConflict     = fault.New(fault.Precondition, "conflict")
	ErrExpired      = fault.WithReason(fault.Precondition, "EXPIRED", "expired")
	ErrPermission   = fault.New(fault.Permission, "permission denied")
	ErrHashMismatch = fault.WithReason(fault.DataLoss, "HASH_MISMATCH", "content hash mismatch")
	ErrUnavailable  = fault.New(fault.Unavailable, "unavailable")
)
