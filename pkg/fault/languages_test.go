package fault

import (
	"slices"
	"testing"
)

func TestEnglishWords(t *testing.T) {
	for _, tc := range []struct {
		s         string
		technical []string
		want      []string
	}{
		{"ジョブ job_1 は見つかりません", nil, []string{"job_1"}},
		{"ジョブ job_1 は見つかりません", []string{"job_1"}, nil},
		{"--limit は 1〜500 にしてください（例: 30m, 1h）", []string{"--limit"}, nil},
		{"接続できません: connection refused", nil, []string{"connection", "refused"}},
		{"PICOCLAW_TOKEN を設定してください。", []string{"PICOCLAW_TOKEN"}, nil},
		{"the job failed. the end", nil, []string{"the", "job", "failed", "end"}},
	} {
		if got := EnglishWords(tc.s, tc.technical...); !slices.Equal(got, tc.want) {
			t.Errorf("EnglishWords(%q) = %q, want %q", tc.s, got, tc.want)
		}
	}
	if !HasJapanese("承認") || !HasJapanese("カタカナ") || HasJapanese("approve, 1h, «»") {
		t.Error("HasJapanese")
	}
}

func TestCheckLanguages(t *testing.T) {
	if err := testTexts.CheckLanguages(); err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]Catalog{
		"English in Japanese": {"X": {"ジョブ %[1]s を approve できません", "cannot approve job %[1]s"}},
		"Japanese in English": {"X": {"ジョブ %[1]s", "job %[1]s は"}},
	} {
		if err := c.CheckLanguages(); err == nil {
			t.Errorf("%s: passed", name)
		}
	}
	if err := (Catalog{"X": {"%[1]s を --force で上書きします", "overwrite %[1]s with --force"}}).CheckLanguages("--force"); err != nil {
		t.Errorf("a technical word: %v", err)
	}
}
