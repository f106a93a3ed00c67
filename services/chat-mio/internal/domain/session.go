package domain

import (
	"fmt"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"
)

// Session is the state chat-mio keeps per conversation (SPEC §10).
type Session struct {
	ID        string
	LocalOnly bool
	// PrevPrimaryRoute is the route of the last routed message ("" before the first one).
	PrevPrimaryRoute string
	// Pending holds the job ids waiting for an approval decision in this session.
	Pending []string
	// Memory is today's recent turns, oldest first.
	Memory []Turn
	// Note is the summary of the previous day's memory, written at the daily cutover.
	Note string
	// Degraded is true when the session store could not be read and the session was treated as new.
	Degraded bool
}

// Turn is one message of the short memory.
type Turn struct {
	Role string    `json:"role"` // user or assistant
	Text string    `json:"text"`
	At   time.Time `json:"at"`
}

// Channel of a session id.
func Channel(sessionID string) string {
	ch, _, _ := strings.Cut(sessionID, ":")
	return ch
}

// ValidateSessionID checks the forms of SPEC §10: line:<id>, slack:<channel>:<thread_ts>, cli:<name>.
func ValidateSessionID(id string) error {
	if len(id) > 256 || !utf8.ValidString(id) || strings.ContainsAny(id, " \t\r\n\x00") {
		return fmt.Errorf("%w: session id %q", ErrInvalid, id)
	}
	parts := strings.Split(id, ":")
	ok := false
	switch parts[0] {
	case "line", "cli":
		ok = len(parts) == 2 && parts[1] != ""
	case "slack":
		ok = len(parts) == 3 && parts[1] != "" && parts[2] != ""
	}
	if !ok {
		return fmt.Errorf("%w: session id %q (want line:<id>, slack:<channel>:<thread_ts> or cli:<name>)", ErrInvalid, id)
	}
	return nil
}

// MemoryDay is the short-memory bucket of t: memory starts afresh at 00:00 in loc.
func MemoryDay(t time.Time, loc *time.Location) string {
	return t.In(loc).Format("20060102")
}

// PreviousDay is the memory day before day (a MemoryDay string); "" when day does not parse.
func PreviousDay(day string) string {
	t, err := time.Parse("20060102", day)
	if err != nil {
		return ""
	}
	return t.AddDate(0, 0, -1).Format("20060102")
}

// ClipTurn bounds a remembered text so the prompt stays small.
func ClipTurn(s string, max int) string {
	if max <= 0 || utf8.RuneCountInString(s) <= max {
		return s
	}
	r := []rune(s)
	return string(r[:max]) + "…"
}

// OneLine is a peer's text on one line (line breaks, tabs and other control characters become
// spaces, runs of spaces one), bounded by ClipTurn: it cannot add lines that pass for the
// reply's own.
func OneLine(s string, max int) string {
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || r == '\u2028' || r == '\u2029' {
			return ' '
		}
		return r
	}, s)
	return ClipTurn(strings.Join(strings.Fields(s), " "), max)
}
