package patch

import (
	"github.com/picoclaw-suite/picoclaw/pkg/fault"
)

// ShellTexts are the shell analyzer's words about what it found (ShellFinding) and why a
// script cannot run without a person (ShellAutomation), by code. The arguments are data: a
// command line as written, a path, a flag, a parser's own words. The English forms are the
// Detail and Reason texts (the logs and the audit log keep those); a reader sees the text in
// their language (ShellFinding.Text, ShellAutomation.ReasonIn).
var ShellTexts = fault.Catalog{
	// Findings.
	ShellNestedTooDeep:     {"コマンドの入れ子が %[1]s 段を超えています", "commands nested more than %[1]s levels deep"},
	ShellDoesNotParse:      {"構文を解釈できません: %[1]s", "does not parse: %[1]s"},
	ShellBackground:        {"バックグラウンドで実行します: %[1]s", "runs in the background: %[1]s"},
	ShellCoproc:            {"コプロセス（coproc）", "coproc"},
	ShellNetPseudoFile:     {"bash のネットワーク用の疑似ファイル %[1]s", "bash network pseudo-file %[1]s"},
	ShellComputedName:      {"コマンド名が実行時に決まります: %[1]s", "command name is computed: %[1]s"},
	ShellCommand:           {"コマンド %[1]s", "%[1]s"},
	ShellRedirect:          {"%[1]s へのリダイレクト", "> %[1]s"},
	ShellInlineCode:        {"インタプリタに直接渡すコード: %[1]s", "inline interpreter code: %[1]s"},
	ShellGitConfig:         {"コマンドラインで設定を渡す git: %[1]s", "git with command-line configuration: %[1]s"},
	ShellGitComputed:       {"git のサブコマンドが実行時に決まります: %[1]s", "git subcommand is computed: %[1]s"},
	ShellPipesInto:         {"%[1]s にパイプで渡します", "pipes into %[1]s"},
	ShellComputedPath:      {"実行時に決まるパスに書き込みます: %[1]s", "writes to a computed path: %[1]s"},
	ShellTruncates:         {"%[1]s を空にします", "truncates %[1]s"},
	ShellCodeAtRunTime:     {"実行時に組み立てられるコード: %[1]s", "code built at run time: %[1]s"},
	ShellProcessSubst:      {"プロセス置換を実行します: %[1]s", "runs a process substitution: %[1]s"},
	ShellRunsCodeAtRunTime: {"実行時に組み立てたコードを実行します: %[1]s", "runs code built at run time: %[1]s"},

	// Why a script is not automatable.
	AutoRisky:            {"危険な構文（%[1]s）: %[2]s", "risky construct (%[1]s): %[2]s"},
	AutoDoesNotParse:     {"構文を解釈できません", "does not parse"},
	AutoSetsVariables:    {"変数を設定します: %[1]s", "sets variables: %[1]s"},
	AutoDefinesFunction:  {"関数を定義します", "defines a function"},
	AutoLoopVariable:     {"ループ変数 %[1]s を使います", "loop variable %[1]s"},
	AutoAssignsInExpand:  {"展開の中で変数に代入します", "assigns a variable in an expansion"},
	AutoExpandedPath:     {"実行時に展開されるパスに書き込みます: %[1]s", "writes to a path that is expanded at run time: %[1]s"},
	AutoProgramByPath:    {"パスで指定したプログラムを実行します: %[1]s", "runs a program by path: %[1]s"},
	AutoNotListed:        {"%[1]s は承認なしで実行できるコマンドではありません", "%[1]s is not a command that runs without approval"},
	AutoPrintfSetsVar:    {"printf -v は変数を設定します", "printf -v sets a variable"},
	AutoUniqOutput:       {"出力ファイルを指定した uniq", "uniq with an output file"},
	AutoComputedArgument: {"実行時に決まる引数を持つ %[1]s: %[2]s", "%[1]s with a computed argument: %[2]s"},
	AutoOption:           {"%[1]s のオプション %[2]s", "%[1]s %[2]s"},
}

// The codes of ShellTexts.
const (
	ShellNestedTooDeep     = "SHELL_NESTED_TOO_DEEP"
	ShellDoesNotParse      = "SHELL_DOES_NOT_PARSE"
	ShellBackground        = "SHELL_BACKGROUND"
	ShellCoproc            = "SHELL_COPROC"
	ShellNetPseudoFile     = "SHELL_NETWORK_PSEUDO_FILE"
	ShellComputedName      = "SHELL_COMPUTED_COMMAND_NAME"
	ShellCommand           = "SHELL_COMMAND"
	ShellRedirect          = "SHELL_REDIRECT"
	ShellInlineCode        = "SHELL_INLINE_CODE"
	ShellGitConfig         = "SHELL_GIT_CONFIG"
	ShellGitComputed       = "SHELL_GIT_COMPUTED_SUBCOMMAND"
	ShellPipesInto         = "SHELL_PIPES_INTO"
	ShellComputedPath      = "SHELL_COMPUTED_PATH"
	ShellTruncates         = "SHELL_TRUNCATES"
	ShellCodeAtRunTime     = "SHELL_CODE_AT_RUN_TIME"
	ShellProcessSubst      = "SHELL_PROCESS_SUBSTITUTION"
	ShellRunsCodeAtRunTime = "SHELL_RUNS_CODE_AT_RUN_TIME"

	AutoRisky            = "AUTO_RISKY_CONSTRUCT"
	AutoDoesNotParse     = "AUTO_DOES_NOT_PARSE"
	AutoSetsVariables    = "AUTO_SETS_VARIABLES"
	AutoDefinesFunction  = "AUTO_DEFINES_FUNCTION"
	AutoLoopVariable     = "AUTO_LOOP_VARIABLE"
	AutoAssignsInExpand  = "AUTO_ASSIGNS_IN_EXPANSION"
	AutoExpandedPath     = "AUTO_EXPANDED_PATH"
	AutoProgramByPath    = "AUTO_PROGRAM_BY_PATH"
	AutoNotListed        = "AUTO_NOT_LISTED"
	AutoPrintfSetsVar    = "AUTO_PRINTF_SETS_VARIABLE"
	AutoUniqOutput       = "AUTO_UNIQ_OUTPUT_FILE"
	AutoComputedArgument = "AUTO_COMPUTED_ARGUMENT"
	AutoOption           = "AUTO_OPTION"
)

// ShellTechnical are the names in ShellTexts' Japanese forms that have no Japanese name.
var ShellTechnical = []string{"coproc", "bash", "git", "printf", "uniq"}

// ShellText is code of ShellTexts with args said in locale. AUTO_RISKY_CONSTRUCT carries a
// finding: its arguments are the flag, then the finding's code and arguments.
func ShellText(locale, code string, args []string) string {
	if code == AutoRisky && len(args) >= 2 && ShellTexts.Has(args[1]) {
		return ShellTexts.Text(locale, code, args[0], ShellTexts.Text(locale, args[1], args[2:]...))
	}
	return ShellTexts.Text(locale, code, args...)
}

// Text is what the finding says in locale; a finding without a code (one recorded before
// findings had codes) is its Detail.
func (f ShellFinding) Text(locale string) string {
	if f.Code == "" || !ShellTexts.Has(f.Code) {
		return f.Detail
	}
	return ShellText(locale, f.Code, f.Args)
}

// ReasonIn is why the script cannot run without a person, in locale ("" when it can).
func (s ShellAutomation) ReasonIn(locale string) string {
	if s.ReasonCode == "" || !ShellTexts.Has(s.ReasonCode) {
		return s.Reason
	}
	return ShellText(locale, s.ReasonCode, s.ReasonArgs)
}
