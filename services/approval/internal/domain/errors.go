// Package domain holds the approval job aggregate, its event-sourced state machine, the
// Auto-Approve grant and the policy that decides between refuse, ask and auto-approve.
package domain

import "github.com/picoclaw-suite/picoclaw/pkg/fault"

// Sentinel errors, classified by pkg/fault; the rpc and httpapi packages map them by kind.
var (
	ErrNotFound   = fault.New(fault.NotFound, "not found")
	ErrConflict   = fault.New(fault.Conflict, "conflict")
	ErrInvalid    = fault.New(fault.Invalid, "invalid argument")
	ErrPermission = fault.New(fault.Permission, "permission denied")
	ErrExpired    = fault.WithReason(fault.Precondition, "EXPIRED", "expired")
	// ErrHashMismatch: the stored or executed content does not hash to the approved value.
	ErrHashMismatch = fault.WithReason(fault.DataLoss, "HASH_MISMATCH", "hash mismatch")
	// ErrNotHolder: a report or renewal from an executor that does not hold the job's claim (any
	// more): another one took it over, or it never had it.
	ErrNotHolder = fault.WithReason(fault.Conflict, "NOT_CLAIM_HOLDER", "not the holder of the claim")
	// ErrVersionConflict is an optimistic-concurrency miss inside a store; callers retry.
	ErrVersionConflict = fault.New(fault.Conflict, "version conflict")
)

// ErrUnavailable: a dependency (Redis for Auto-Approve changes) cannot be reached.
var ErrUnavailable = fault.New(fault.Unavailable, "unavailable")
