package fault

import (
	"errors"
	"fmt"
	"slices"
	"testing"
)

var testTexts = Catalog{
	"STATE":         {"ジョブ %[1]s は%[2]sです", "job %[1]s is %[2]s"},
	"PENDING":       {"承認待ち", "pending"},
	"DIFF_CONFLICT": {"%[1]s に差分を適用できません（%[2]s 行目付近の文脈が一致しません）", "the diff does not apply to %[1]s (context mismatch near line %[2]s)"},
}

// A Message is its sentinel's kind, says itself in the user's language and keeps the failure
// beneath for the log only; a peer's text passed on is found the same way.
func TestMessage(t *testing.T) {
	conflict := New(Conflict, "conflict")
	cause := errors.New("hunk 2: no match")
	err := fmt.Errorf("apply op 3: %w", testTexts.Wrap(conflict, cause, "DIFF_CONFLICT", "a.txt", 12))
	if !errors.Is(err, conflict) || !errors.Is(err, cause) || KindOf(err) != Conflict {
		t.Fatalf("kind of %v: %v", err, KindOf(err))
	}
	if got, want := err.Error(), "apply op 3: the diff does not apply to a.txt (context mismatch near line 12): hunk 2: no match"; got != want {
		t.Errorf("Error() = %q, want %q", got, want)
	}
	for _, tc := range []struct{ locale, want string }{
		{"ja", "a.txt に差分を適用できません（12 行目付近の文脈が一致しません）"},
		{"", "a.txt に差分を適用できません（12 行目付近の文脈が一致しません）"},
		{"en-US", "the diff does not apply to a.txt (context mismatch near line 12)"},
	} {
		if got, ok := Text(err, tc.locale); !ok || got != tc.want {
			t.Errorf("Text(%q) = %q %v, want %q", tc.locale, got, ok, tc.want)
		}
	}
	if m := MessageOf(err); m == nil || m.Code != "DIFF_CONFLICT" || len(m.Args) != 2 || m.Args[1] != "12" {
		t.Errorf("MessageOf = %+v", m)
	}
	if _, ok := Text(fmt.Errorf("x: %w", conflict), "ja"); ok {
		t.Error("an error without a message has a text for the user")
	}
	said := WithText(Wrap(Precondition, errors.New("job is granted, not approved")), "ja", "ジョブは承認済みです")
	if got, ok := Text(fmt.Errorf("claim: %w", said), "ja"); !ok || got != "ジョブは承認済みです" || KindOf(said) != Precondition {
		t.Errorf("peer text: %q %v, kind %v", got, ok, KindOf(said))
	}
	state := testTexts.New(nil, "STATE", "job_1", Term("PENDING"))
	if got, _ := Text(state, "ja"); got != "ジョブ job_1 は承認待ちです" || state.Error() != "job job_1 is pending" || state.Args[1] != "PENDING" {
		t.Errorf("term: %q / %q / %v", got, state.Error(), state.Args)
	}
	if got := testTexts.Text("ja", "NO_SUCH_CODE", "x"); got != "NO_SUCH_CODE x" {
		t.Errorf("unknown code = %q", got)
	}
}

func TestCatalogCheck(t *testing.T) {
	if err := testTexts.Check(); err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]Catalog{
		"a verb other than %[n]s": {"X": {"%[1]d 件", "%[1]d items"}},
		"a bare verb":             {"X": {"%s 件", "%[1]s items"}},
		"forms with other args":   {"X": {"%[1]s 件", "%[1]s of %[2]s items"}},
		"an empty form":           {"X": {"件", ""}},
		"English in Japanese":     {"X": {"the job %[1]s failed", "the job %[1]s failed"}},
	} {
		if err := c.Check(); err == nil {
			t.Errorf("%s: passed the check", name)
		}
	}
}

func TestReportUncoveredNamesEachCodeWithoutACase(t *testing.T) {
	c := Catalog{"B": {"び", "b"}, "A": {"え", "a"}, "C": {"し", "c"}}
	var got []string
	c.ReportUncovered(func(format string, args ...any) { got = append(got, fmt.Sprintf(format, args...)) },
		func(code string) bool { return code == "B" })
	if want := []string{"A: no case says this text", "C: no case says this text"}; !slices.Equal(got, want) {
		t.Fatalf("reported %q, want %q", got, want)
	}
}
