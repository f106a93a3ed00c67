// Package domain holds the approval job aggregate, its event-sourced state machine, the
// Auto-Approve grant and the policy that decides between refuse, ask and auto-approve.
package domain

import "errors"

// Sentinel errors; the rpc and httpapi packages map them to codes in one place each.
var (
	ErrNotFound   = errors.New("not found")
	ErrConflict   = errors.New("conflict")
	ErrInvalid    = errors.New("invalid argument")
	ErrPermission = errors.New("permission denied")
	ErrExpired    = errors.New("expired")
	// ErrHashMismatch: the stored or executed content does not hash to the approved value.
	ErrHashMismatch = errors.New("hash mismatch")
	// ErrVersionConflict is an optimistic-concurrency miss inside a store; callers retry.
	ErrVersionConflict = errors.New("version conflict")
)

// ErrUnavailable: a dependency (Redis for Auto-Approve changes) cannot be reached.
var ErrUnavailable = errors.New("unavailable")
