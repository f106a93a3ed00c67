package patch

import (
	"errors"
	"fmt"
)

// ErrInvalid is wrapped by every parse error, so callers can map it with errors.Is.
var ErrInvalid = errors.New("invalid patch")

// ErrHashMismatch means a patch no longer hashes to the value it was approved for.
var ErrHashMismatch = errors.New("patch hash mismatch")

// Error is a parse error that names the operation (its Source, e.g. "command 3") and the
// problem, so a coder or a user can fix the patch.
type Error struct {
	// Source is where the problem is: "command 2", "fence 1 (line 4)", "diff file 3", or "patch".
	Source string
	// Field is the offending field when there is one (type, action, target, content, metadata).
	Field string
	Msg   string
}

func (e *Error) Error() string {
	if e.Field != "" {
		return fmt.Sprintf("%s: %s: %s", e.Source, e.Field, e.Msg)
	}
	return fmt.Sprintf("%s: %s", e.Source, e.Msg)
}

// Is makes errors.Is(err, ErrInvalid) true.
func (e *Error) Is(target error) bool { return target == ErrInvalid }

func errorf(source, field, format string, args ...any) *Error {
	return &Error{Source: source, Field: field, Msg: fmt.Sprintf(format, args...)}
}
