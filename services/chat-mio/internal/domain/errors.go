// Package domain holds chat-mio's rules: session ids and state, command syntax, the prompt
// order and the user-facing texts. It does no I/O.
package domain

import (
	"errors"
	"strings"

	"github.com/picoclaw-suite/picoclaw/pkg/fault"
)

// Sentinel errors of chat-mio. The peer adapters classify every peer failure as one of them
// (or as none, for an unexpected failure) so the use cases never look at transport codes.
var (
	// ErrInvalid: the request itself is malformed (e.g. an unknown session id form), or a peer
	// rejected what it was sent as malformed.
	ErrInvalid = fault.New(fault.Invalid, "invalid")
	// ErrUsage: a command was recognised but its arguments are wrong.
	ErrUsage = fault.New(fault.Invalid, "usage")
	// ErrNotFound: the thing referred to does not exist (e.g. no deliberation for a job, a job
	// approval does not know).
	ErrNotFound = fault.New(fault.NotFound, "not found")
	// ErrUnavailable: a store or peer could not be reached, or did not answer in time; trying
	// again later may work.
	ErrUnavailable = fault.New(fault.Unavailable, "unavailable")
	// ErrConflict: the thing is not in a state that allows the request (e.g. a job already
	// decided, expired or claimed; a job id that already exists).
	ErrConflict = fault.New(fault.Precondition, "conflict")
	// ErrForbidden: the caller or the person it acts for may not do this (e.g. not an approver).
	ErrForbidden = fault.New(fault.Permission, "forbidden")
)

// PeerError is a peer's failure as chat-mio sees it: which peer, which kind (one of the
// sentinels above, or nil for an unexpected failure) and the peer's own explanation.
type PeerError struct {
	Peer string
	// Kind is ErrUnavailable, ErrNotFound, ErrConflict, ErrForbidden, ErrInvalid or nil.
	Kind error
	// Message is the peer's text for the user (its google.rpc.LocalizedMessage, in the session's
	// locale), shown as it is; "" when the peer gave none — its English is never shown.
	Message string
	// Reason is the peer's stable code for the failure (google.rpc.ErrorInfo), "" when none.
	Reason string
	// Cause is the transport error, for logs.
	Cause error
}

func (e *PeerError) Error() string {
	var b strings.Builder
	b.WriteString(e.Peer)
	if e.Kind != nil {
		b.WriteString(": " + e.Kind.Error())
	}
	if e.Message != "" {
		b.WriteString(": " + e.Message)
	}
	return b.String()
}

// Unwrap exposes the kind (for errors.Is) and the cause.
func (e *PeerError) Unwrap() []error {
	var out []error
	for _, err := range []error{e.Kind, e.Cause} {
		if err != nil {
			out = append(out, err)
		}
	}
	return out
}

// PeerMessage is the peer's text for the user carried by err ("" when there is none).
func PeerMessage(err error) string {
	if pe, ok := errors.AsType[*PeerError](err); ok {
		return pe.Message
	}
	return ""
}

// PeerReason is the peer's stable code for err ("" when there is none).
func PeerReason(err error) string {
	if pe, ok := errors.AsType[*PeerError](err); ok {
		return pe.Reason
	}
	return ""
}

// PeerText is what the user is told of a peer's refusal in l: the peer's own text, or a short
// generic sentence of the failure's kind when the peer gave none.
func PeerText(l Locale, err error) string {
	if m := PeerMessage(err); m != "" {
		return m
	}
	return fault.KindOf(err).Text(string(l))
}
