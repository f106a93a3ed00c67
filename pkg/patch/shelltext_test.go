package patch

import (
	"slices"
	"strings"
	"testing"
)

func TestShellTextsLanguages(t *testing.T) {
	if err := ShellTexts.Check(); err != nil {
		t.Fatal(err)
	}
	if err := ShellTexts.CheckLanguages(ShellTechnical...); err != nil {
		t.Fatal(err)
	}
}

// TestEveryShellFindingText lists every finding the analyzer can report with a script that
// raises it, in Japanese and English; the English is the finding's Detail, as before it had a
// code. A code added to ShellTexts must be added here or to TestEveryShellAutomationText.
func TestEveryShellFindingText(t *testing.T) {
	tests := []struct {
		script string
		flag   Flag
		code   string
		ja, en string
	}{
		{strings.Repeat("eval ", 10) + "true", FlagDynamicCommand, ShellNestedTooDeep,
			"コマンドの入れ子が 8 段を超えています", "commands nested more than 8 levels deep"},
		{"echo 'x", FlagShellUnparsed, ShellDoesNotParse,
			"構文を解釈できません: 1:6: reached EOF without closing quote `'`", "does not parse: 1:6: reached EOF without closing quote `'`"},
		{"sleep 10 &", FlagBackground, ShellBackground,
			"バックグラウンドで実行します: sleep 10", "runs in the background: sleep 10"},
		{"coproc cat", FlagBackground, ShellCoproc,
			"コプロセス（coproc）", "coproc"},
		{"cat < /dev/tcp/example.com/80", FlagNetwork, ShellNetPseudoFile,
			"bash のネットワーク用の疑似ファイル /dev/tcp/example.com/80", "bash network pseudo-file /dev/tcp/example.com/80"},
		{"$CMD -x", FlagDynamicCommand, ShellComputedName,
			"コマンド名が実行時に決まります: $CMD", "command name is computed: $CMD"},
		{"rm -rf build", FlagDelete, ShellCommand,
			"コマンド rm -rf build", "rm -rf build"},
		{"echo hi > /etc/motd", FlagOutsideWorkspace, ShellRedirect,
			"/etc/motd へのリダイレクト", "> /etc/motd"},
		{"python3 -c 'print(1)'", FlagDynamicCommand, ShellInlineCode,
			"インタプリタに直接渡すコード: python3 -c print(1)", "inline interpreter code: python3 -c print(1)"},
		{"git -c core.pager=less log", FlagDynamicCommand, ShellGitConfig,
			"コマンドラインで設定を渡す git: git -c core.pager=less log", "git with command-line configuration: git -c core.pager=less log"},
		{"git $SUB", FlagDynamicCommand, ShellGitComputed,
			"git のサブコマンドが実行時に決まります: git $SUB", "git subcommand is computed: git $SUB"},
		{"cat x.sh | bash", FlagDynamicCommand, ShellPipesInto,
			"bash にパイプで渡します", "pipes into bash"},
		{"echo hi > $OUT", FlagOutsideWorkspace, ShellComputedPath,
			"実行時に決まるパスに書き込みます: $OUT", "writes to a computed path: $OUT"},
		{": > notes.txt", FlagDelete, ShellTruncates,
			"notes.txt を空にします", "truncates notes.txt"},
		{"eval $CODE", FlagDynamicCommand, ShellCodeAtRunTime,
			"実行時に組み立てられるコード: $CODE", "code built at run time: $CODE"},
		{"source <(cat x)", FlagDynamicCommand, ShellProcessSubst,
			"プロセス置換を実行します: source <(cat x)", "runs a process substitution: source <(cat x)"},
		{"bash -c \"$CODE\"", FlagDynamicCommand, ShellRunsCodeAtRunTime,
			"実行時に組み立てたコードを実行します: bash -c \"$CODE\"", "runs code built at run time: bash -c \"$CODE\""},
	}
	seen := map[string]bool{}
	for _, tc := range tests {
		var f ShellFinding
		for _, x := range AnalyzeShell(tc.script).Findings {
			if x.Flag == tc.flag && x.Code == tc.code {
				f = x
				break
			}
		}
		if f.Code == "" {
			t.Errorf("%q: no %s finding with %s in %+v", tc.script, tc.flag, tc.code, AnalyzeShell(tc.script).Findings)
			continue
		}
		seen[tc.code] = true
		if got := f.Text("ja"); got != tc.ja {
			t.Errorf("%q ja: got %q, want %q", tc.script, got, tc.ja)
		}
		if got := f.Text("en"); got != tc.en {
			t.Errorf("%q en: got %q, want %q", tc.script, got, tc.en)
		}
		if f.Detail != tc.en {
			t.Errorf("%q: Detail %q, want the English text %q", tc.script, f.Detail, tc.en)
		}
	}
	ShellTexts.ReportUncovered(t.Errorf, func(code string) bool { return !strings.HasPrefix(code, "SHELL_") || seen[code] })
}

// TestEveryShellAutomationText lists every reason a script is not automatable, in Japanese and
// English; the English is Reason.
func TestEveryShellAutomationText(t *testing.T) {
	tests := []struct {
		script string
		code   string
		ja, en string
	}{
		{"curl https://example.com", AutoRisky,
			"危険な構文（network）: コマンド curl https://example.com", "risky construct (network): curl https://example.com"},
		{"sleep 1 &", AutoRisky,
			"危険な構文（background）: バックグラウンドで実行します: sleep 1", "risky construct (background): runs in the background: sleep 1"},
		{"FOO=1 ls", AutoSetsVariables, "変数を設定します: ls", "sets variables: ls"},
		{"f() { ls; }", AutoDefinesFunction, "関数を定義します", "defines a function"},
		{"for PATH in a b; do ls; done", AutoLoopVariable, "ループ変数 PATH を使います", "loop variable PATH"},
		{"echo ${X:=1}", AutoAssignsInExpand, "展開の中で変数に代入します", "assigns a variable in an expansion"},
		{"touch 'a*'", AutoExpandedPath, "実行時に展開されるパスに書き込みます: \"a*\"", "writes to a path that is expanded at run time: \"a*\""},
		{"./build.sh", AutoProgramByPath, "パスで指定したプログラムを実行します: ./build.sh", "runs a program by path: ./build.sh"},
		{"make all", AutoNotListed, "make は承認なしで実行できるコマンドではありません", "make is not a command that runs without approval"},
		{"printf -v x hi", AutoPrintfSetsVar, "printf -v は変数を設定します", "printf -v sets a variable"},
		{"uniq a b", AutoUniqOutput, "出力ファイルを指定した uniq", "uniq with an output file"},
		{"sort $F", AutoComputedArgument, "実行時に決まる引数を持つ sort: $F", "sort with a computed argument: $F"},
		{"sort -o out.txt in.txt", AutoOption, "sort のオプション -o", "sort -o"},
	}
	seen := map[string]bool{}
	for _, tc := range tests {
		got := AnalyzeShellAutomation(tc.script)
		if got.OK || got.ReasonCode != tc.code {
			t.Errorf("%q: ok=%v code %q (%s), want %s", tc.script, got.OK, got.ReasonCode, got.Reason, tc.code)
			continue
		}
		seen[tc.code] = true
		if s := got.ReasonIn("ja"); s != tc.ja {
			t.Errorf("%q ja: got %q, want %q", tc.script, s, tc.ja)
		}
		if s := got.ReasonIn("en"); s != tc.en {
			t.Errorf("%q en: got %q, want %q", tc.script, s, tc.en)
		}
		if got.Reason != tc.en {
			t.Errorf("%q: Reason %q, want the English text %q", tc.script, got.Reason, tc.en)
		}
	}
	ShellTexts.ReportUncovered(t.Errorf, func(code string) bool {
		return !strings.HasPrefix(code, "AUTO_") || seen[code] || code == AutoDoesNotParse
	})
	// A script that does not parse is a finding first (AUTO_RISKY_CONSTRUCT); the reason of its
	// own is said all the same.
	a := ShellAutomation{Reason: "does not parse", ReasonCode: AutoDoesNotParse}
	if got := []string{a.ReasonIn("ja"), a.ReasonIn("en")}; !slices.Equal(got, []string{"構文を解釈できません", "does not parse"}) {
		t.Errorf("AUTO_DOES_NOT_PARSE: %q", got)
	}
	// A finding or reason recorded without a code is shown as it was written.
	if got := (ShellFinding{Detail: "rm x"}).Text("ja"); got != "rm x" {
		t.Errorf("finding without a code: %q", got)
	}
}
