package channel

import (
	"fmt"
	"unicode/utf8"
)

// MaxErrorText bounds the text of a request body's decoding error in the log: a decoder's
// message may quote part of the body (encoding/json's type errors quote a number literal of any
// length whole).
const MaxErrorText = 300

// ClipError is err's text cut to MaxErrorText bytes (at a character boundary), saying how much
// was cut.
func ClipError(err error) string {
	s := err.Error()
	if len(s) <= MaxErrorText {
		return s
	}
	// Back to the start of the character the bound falls in (at most UTFMax-1 bytes: text that
	// is not UTF-8 is cut where it is).
	cut := MaxErrorText
	for back := 0; back < utf8.UTFMax-1 && !utf8.RuneStart(s[cut]); back++ {
		cut--
	}
	return fmt.Sprintf("%s… (%d more bytes)", s[:cut], len(s)-cut)
}
