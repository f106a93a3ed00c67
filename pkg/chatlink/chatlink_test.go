package chatlink

import (
	"strings"
	"testing"

	commonv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/common/v1"
)

func TestCommand(t *testing.T) {
	for a, want := range map[Action]string{
		{Kind: ActionApprove, JobID: "job_1"}:          "/approve job_1",
		{Kind: ActionDeny, JobID: "job_1"}:             "/deny job_1",
		{Kind: ActionPick, JobID: "job_1", Value: "2"}: "/pick job_1 2",
		{Kind: ActionPick, JobID: "job_1"}:             "/pick job_1",
	} {
		if got := Command(a); got != want {
			t.Errorf("Command(%+v) = %q, want %q", a, got, want)
		}
	}
}

func TestProtoConverters(t *testing.T) {
	rs := RepliesFromProto([]*commonv1.ReplyMessage{{Text: "t", JobId: "job_2", Actions: []*commonv1.Action{
		{Kind: commonv1.ActionKind_ACTION_KIND_PICK, Label: "A", Value: "a"},
		{Kind: commonv1.ActionKind_ACTION_KIND_UNSPECIFIED},
	}}})
	if len(rs) != 1 || len(rs[0].Actions) != 1 || rs[0].Actions[0] != (Action{Kind: ActionPick, JobID: "job_2", Label: "A", Value: "a"}) {
		t.Fatalf("replies %+v", rs)
	}
	pb := ActionToProto(Action{Kind: ActionDeny, JobID: "job_3", Value: "v"})
	if pb.GetKind() != commonv1.ActionKind_ACTION_KIND_DENY || pb.GetJobId() != "job_3" || pb.GetValue() != "v" {
		t.Fatalf("proto %v", pb)
	}
}

func TestSplitText(t *testing.T) {
	for _, tc := range []struct {
		in    string
		limit int
		want  []string
	}{
		{"", 5, nil},
		{"short", 5, []string{"short"}},
		{"abcdefghij", 4, []string{"abcd", "efgh", "ij"}},
		{"ab\ncdefgh", 4, []string{"ab\nc", "defg", "h"}}, // a newline in the first half is not a cut
		{"abc\ndefgh", 5, []string{"abc", "defgh"}},       // a newline in the second half is
		{"日本語のテキスト", 3, []string{"日本語", "のテキ", "スト"}},     // characters are never split
		{"abc", 0, []string{"a", "b", "c"}},
	} {
		got := SplitText(tc.in, tc.limit, RuneFit)
		if strings.Join(got, "|") != strings.Join(tc.want, "|") || len(got) != len(tc.want) {
			t.Errorf("SplitText(%q, %d) = %q, want %q", tc.in, tc.limit, got, tc.want)
		}
	}
}
