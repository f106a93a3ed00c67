package channel

import (
	"errors"
	"strings"
	"testing"
	"unicode/utf8"
)

func TestClipError(t *testing.T) {
	short := errors.New("json: cannot unmarshal string into Go value of type int64")
	if got := ClipError(short); got != short.Error() {
		t.Fatalf("short error changed: %q", got)
	}
	exact := errors.New(strings.Repeat("a", MaxErrorText))
	if got := ClipError(exact); got != exact.Error() {
		t.Fatalf("error of exactly the bound changed: %q", got)
	}
	// A three-byte character across the bound is dropped whole, never split.
	long := errors.New(strings.Repeat("a", MaxErrorText-1) + strings.Repeat("語", 10_000))
	got := ClipError(long)
	if !utf8.ValidString(got) || !strings.HasPrefix(got, strings.Repeat("a", MaxErrorText-1)+"…") ||
		!strings.HasSuffix(got, "(30000 more bytes)") {
		t.Fatalf("clipped to %q", got)
	}
}
