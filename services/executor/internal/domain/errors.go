// Package domain holds the executor's types, invariants and sentinel errors. It does no I/O.
package domain

import "errors"

// Sentinel errors; internal/rpc maps them to Connect codes in one place.
var (
	ErrInvalid      = errors.New("invalid")
	ErrNotFound     = errors.New("not found")
	ErrConflict     = errors.New("conflict")
	ErrExpired      = errors.New("expired")
	ErrPermission   = errors.New("permission denied")
	ErrHashMismatch = errors.New("content hash mismatch")
	ErrUnavailable  = errors.New("unavailable")
)
