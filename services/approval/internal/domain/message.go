package domain

import (
	"fmt"
	"net/url"
	"slices"
	"strings"
	"time"
	"unicode"
	"unicode/utf8"

	"github.com/picoclaw-suite/picoclaw/pkg/patch"
)

// BrowserWarningJA is shown on every browser job (SPEC §6).
const (
	BrowserWarningJA = "⚠️ この操作はブラウザ操作を含みます"
	BrowserWarningEN = "⚠️ This job includes browser operations"
)

type texts struct {
	title, summary, files, envs, stats, attention, risk, rollback, cost, expires, unknown, answer, buttons string
	yes, no                                                                                                string
	riskLevel                                                                                              map[string]string
	browser                                                                                                string
	none                                                                                                   string
	statusLine                                                                                             string
	diffStats                                                                                              string
	push, pushURL, forced, notForced, network                                                              string
	// costLine is the estimate; envShell, envNetwork and envBrowser name what a job reaches
	// beyond its files.
	costLine, envShell, envNetwork, envBrowser string
}

var ja = texts{
	title: "🔐 承認リクエスト %s", summary: "概要", files: "影響ファイル", envs: "影響する環境", stats: "差分",
	attention: "要注意の操作", risk: "リスク", rollback: "ロールバック", cost: "コスト見積もり", expires: "有効期限",
	unknown: "解釈できなかったブロック（実行されません）", answer: "回答方法: 承認は /approve %s 、拒否は /deny %s [理由]",
	buttons: "（下のボタンでも回答できます）", yes: "可能", no: "不可", browser: BrowserWarningJA, none: "なし",
	riskLevel:  map[string]string{"high": "高", "medium": "中", "low": "低"},
	statusLine: "コーダーの評価: %s", diffStats: "%s: %d ファイル, +%d -%d\n",
	push:    "プッシュ #%d: リモート %s（%s）, ブランチ %s, 強制: %s\n  実行されるコマンド: %s\n",
	pushURL: "URL", forced: "はい（%s）", notForced: "いいえ",
	network:  "⚠️ ネットワークを使います（サンドボックスでは executor.sandbox.network: allow のときだけ通信できます）",
	costLine: "%s: $%.2f / %d トークン", envShell: "シェル", envNetwork: "ネットワーク", envBrowser: "ブラウザ",
}

var en = texts{
	title: "🔐 Approval request %s", summary: "Summary", files: "Files", envs: "Environments", stats: "Diff",
	attention: "Needs attention", risk: "Risk", rollback: "Rollback", cost: "Cost estimate", expires: "Expires",
	unknown: "Blocks not understood (not executed)", answer: "To answer: /approve %s to approve, /deny %s [reason] to deny",
	buttons: "(or use the buttons below)", yes: "possible", no: "not possible", browser: BrowserWarningEN, none: "none",
	riskLevel:  map[string]string{"high": "high", "medium": "medium", "low": "low"},
	statusLine: "coder's assessment: %s", diffStats: "%s: %d files, +%d -%d\n",
	push:    "Push #%d: remote %s (%s), branch %s, forced: %s\n  command that runs: %s\n",
	pushURL: "URL", forced: "yes (%s)", notForced: "no",
	network:  "⚠️ Uses the network (the sandbox allows it only with executor.sandbox.network: allow)",
	costLine: "%s: $%.2f / %d tokens", envShell: "shell", envNetwork: "network", envBrowser: "browser",
}

func textsFor(locale string) texts {
	if strings.HasPrefix(strings.ToLower(locale), "en") {
		return en
	}
	return ja
}

// ComputedRisk is approval's own risk level: high for anything that needs a person by rule or
// runs scripts in a browser, medium for shell commands and file changes, low otherwise.
func ComputedRisk(p *patch.Patch, hits []Hit) string {
	switch {
	case len(hits) > 0 || p.HasFlag(patch.FlagExecuteScript):
		return "high"
	case p.HasFlag(patch.FlagShell) || p.Stats.Files > 0:
		return "medium"
	}
	return "low"
}

// ComputedRiskOf is the job's computed risk: as recorded at its request, or, for a job recorded
// before that was kept, derived from its stored flags, size and deciding rule.
func ComputedRiskOf(j Job) string {
	if j.ComputedRisk != "" {
		return j.ComputedRisk
	}
	switch {
	case strings.HasPrefix(j.PolicyRule, "hard_"), slices.Contains(j.Flags, string(patch.FlagExecuteScript)):
		return "high"
	case slices.Contains(j.Flags, string(patch.FlagShell)), j.Stats.Files > 0:
		return "medium"
	}
	return "low"
}

// ruleLabel is how the approval request names an operator's rule: its name, less the
// hard_require. prefix.
func ruleLabel(rule string) string { return strings.TrimPrefix(rule, RuleHardRequire) }

// RulesOf names the rules of hits, each once.
func RulesOf(hits []Hit) []string {
	var out []string
	for _, h := range hits {
		if !slices.Contains(out, h.Rule) {
			out = append(out, h.Rule)
		}
	}
	return out
}

// RollbackPossible: the executor snapshots files, but shell commands, browser operations and
// pushes have effects outside the workspace that cannot be undone.
func RollbackPossible(p *patch.Patch) bool {
	return !p.HasFlag(patch.FlagShell) && !p.HasFlag(patch.FlagBrowser) && !p.HasFlag(patch.FlagPushPublic)
}

// Environments lists what outside the workspace files a job touches, in locale: shell, git
// remotes, browser hosts.
func Environments(ops []patch.Operation, locale string) []string {
	t := textsFor(locale)
	var out []string
	add := func(s string) {
		if !slices.Contains(out, s) {
			out = append(out, s)
		}
	}
	for _, op := range ops {
		switch op.Type {
		case patch.TypeShell:
			add(t.envShell)
			if op.HasFlag(patch.FlagNetwork) {
				add(t.envNetwork)
			}
		case patch.TypeGit:
			if push, err := patch.PushOf(op); err == nil {
				add(push.Command())
			} else {
				add("git")
			}
		case patch.TypeBrowser:
			if u, err := url.Parse(op.Target); err == nil && u.Host != "" {
				add(t.envBrowser + " " + u.Host)
			} else {
				add(t.envBrowser)
			}
		}
	}
	return out
}

// SafeText shows LLM-written text as data: one line per input line, at most maxRunes, with
// mentions and channel-wide pings defused.
func SafeText(s string, maxRunes int) string {
	r := strings.NewReplacer("@", "＠", "<!", "‹!", "<@", "‹＠", "<#", "‹#")
	s = r.Replace(strings.TrimSpace(s))
	if utf8.RuneCountInString(s) > maxRunes {
		rs := []rune(s)
		s = string(rs[:maxRunes]) + "…"
	}
	return s
}

// SafeLine is SafeText on one line: line breaks, tabs and other control characters become
// spaces, so text from a person or a model (a deny reason, a display name) cannot add lines
// that pass for the message's own.
func SafeLine(s string, maxRunes int) string {
	s = strings.Map(func(r rune) rune {
		if unicode.IsControl(r) || r == '\u2028' || r == '\u2029' {
			return ' '
		}
		return r
	}, s)
	return SafeText(strings.Join(strings.Fields(s), " "), maxRunes)
}

// SummaryLines derives the 1–3 line summary from the given summary or the plan.
func SummaryLines(summary, plan string) []string {
	src := summary
	if strings.TrimSpace(src) == "" {
		src = plan
	}
	var out []string
	for _, l := range strings.Split(src, "\n") {
		if l = strings.TrimSpace(l); l != "" {
			out = append(out, SafeText(l, 120))
		}
		if len(out) == 3 {
			break
		}
	}
	return out
}

// RequestText is the approval request message for LINE/Slack in the job's locale.
func RequestText(j Job, p *patch.Patch, hits []Hit, loc *time.Location) string {
	t := textsFor(j.Locale)
	var b strings.Builder
	fmt.Fprintf(&b, t.title+"\n", j.ID)
	if lines := SummaryLines(j.Summary, j.Plan); len(lines) > 0 {
		fmt.Fprintf(&b, "%s:\n", t.summary)
		for _, l := range lines {
			b.WriteString("  " + l + "\n")
		}
	}
	if j.UsesBrowser {
		b.WriteString(t.browser + "\n")
	}
	files := j.AffectedPaths
	shown := files
	if len(shown) > 10 {
		shown = shown[:10]
	}
	fileText := t.none
	if len(shown) > 0 {
		safe := make([]string, len(shown))
		for i, f := range shown {
			safe[i] = SafeText(f, 100)
		}
		fileText = strings.Join(safe, ", ")
		if len(files) > len(shown) {
			fileText += fmt.Sprintf(" … (+%d)", len(files)-len(shown))
		}
	}
	fmt.Fprintf(&b, "%s (%d): %s\n", t.files, len(files), fileText)
	if envs := Environments(p.Operations, j.Locale); len(envs) > 0 {
		fmt.Fprintf(&b, "%s: %s\n", t.envs, SafeText(strings.Join(envs, ", "), 200))
	}
	fmt.Fprintf(&b, t.diffStats, t.stats, p.Stats.Files, p.Stats.Additions, p.Stats.Deletions)
	b.WriteString(ChangeLines(p, j.Locale))
	for _, l := range detailLines(j, p, hits, loc, t, true) {
		b.WriteString(l + "\n")
	}
	fmt.Fprintf(&b, t.answer+"\n", j.ID, j.ID)
	b.WriteString(t.buttons)
	return b.String()
}

// detailLines are the lines of the request after the changes: pushes, network, the operations
// that need attention, risk (withRisk), rollback, cost, blocks not understood and expiry.
func detailLines(j Job, p *patch.Patch, hits []Hit, loc *time.Location, t texts, withRisk bool) []string {
	var out []string
	add := func(format string, args ...any) {
		out = append(out, strings.TrimSuffix(fmt.Sprintf(format, args...), "\n"))
	}
	for _, op := range p.Operations {
		push, err := patch.PushOf(op)
		if err != nil {
			continue
		}
		forced := t.notForced
		switch push.Force {
		case patch.ForceOverwrite:
			forced = fmt.Sprintf(t.forced, "--force")
		case patch.ForceWithLease:
			forced = fmt.Sprintf(t.forced, "--force-with-lease")
		}
		add(t.push, op.Index+1, SafeText(push.Remote, 200), t.pushURL, SafeText(push.Branch, 100), forced, SafeText(push.Command(), 400))
	}
	if p.HasFlag(patch.FlagNetwork) {
		out = append(out, t.network)
	}
	if len(hits) > 0 {
		var b strings.Builder
		fmt.Fprintf(&b, "%s:", t.attention)
		for i, h := range hits {
			if i == 8 {
				fmt.Fprintf(&b, "\n  … (+%d)", len(hits)-i)
				break
			}
			where := ""
			if h.Op >= 0 {
				where = fmt.Sprintf("#%d ", h.Op+1)
			}
			fmt.Fprintf(&b, "\n  - %s%s", where, h.TextIn(j.Locale))
		}
		out = append(out, b.String())
	}
	if withRisk {
		out = append(out, riskLine(j, p, hits, t))
	}
	rb := t.no
	if RollbackPossible(p) {
		rb = t.yes
	}
	add("%s: %s", t.rollback, rb)
	if j.Cost.EstimatedCostUSD > 0 || j.Cost.EstimatedTokens > 0 {
		add(t.costLine, t.cost, j.Cost.EstimatedCostUSD, j.Cost.EstimatedTokens)
	}
	if len(p.Unknown) > 0 {
		add("%s: %d", t.unknown, len(p.Unknown))
	}
	if loc == nil {
		loc = time.UTC
	}
	add("%s: %s", t.expires, j.ExpiresAt.In(loc).Format("2006-01-02 15:04 MST"))
	return out
}

func riskLine(j Job, p *patch.Patch, hits []Hit, t texts) string {
	line := fmt.Sprintf("%s: %s", t.risk, t.riskLevel[ComputedRisk(p, hits)])
	if j.Risk.Level != "" {
		level, ok := t.riskLevel[strings.ToLower(j.Risk.Level)]
		if !ok {
			level = SafeText(j.Risk.Level, 20)
		}
		line += fmt.Sprintf(" ("+t.statusLine+")", level)
	}
	return line
}

// Card is the approval request as a card (LINE Flex, Slack blocks): the same content as
// RequestText, laid out in parts; the typed commands stay in the text that goes with it.
type Card struct {
	JobID, Title   string
	Risk, RiskText string
	Summary        []string
	Files          []FileChange
	Facts          []string
	ConsoleURL     string
	Locale         string
}

// RequestCard is the approval request of j as a card, in j's locale; consoleURL is the job's
// console link ("" without one).
func RequestCard(j Job, p *patch.Patch, hits []Hit, loc *time.Location, consoleURL string) Card {
	t := textsFor(j.Locale)
	c := Card{JobID: j.ID, Title: fmt.Sprintf(t.title, j.ID), Risk: ComputedRisk(p, hits), RiskText: riskLine(j, p, hits, t),
		Summary: SummaryLines(j.Summary, j.Plan), ConsoleURL: consoleURL, Locale: "ja"}
	if t.title == en.title {
		c.Locale = "en"
	}
	if j.UsesBrowser {
		c.Facts = append(c.Facts, t.browser)
	}
	var more []string
	c.Files, more = Changes(p, j.Locale)
	if len(c.Files) > 0 && len(more) > 0 {
		c.Files[len(c.Files)-1].More = strings.Join(more, "\n")
	}
	c.Facts = append(c.Facts, strings.TrimSuffix(fmt.Sprintf(t.diffStats, t.stats, p.Stats.Files, p.Stats.Additions, p.Stats.Deletions), "\n"))
	if envs := Environments(p.Operations, j.Locale); len(envs) > 0 {
		c.Facts = append(c.Facts, fmt.Sprintf("%s: %s", t.envs, SafeText(strings.Join(envs, ", "), 200)))
	}
	c.Facts = append(c.Facts, detailLines(j, p, hits, loc, t, false)...)
	return c
}

// ConsoleLink is the address of job id in the console at base (empty without a base): the
// console's own route, #/jobs/<id>.
func ConsoleLink(base, id string) string {
	if base == "" {
		return ""
	}
	return strings.TrimRight(base, "/") + "/#/jobs/" + url.PathEscape(id)
}

// GrantStatusText describes Auto-Approve for chat: scope and remaining time, or that it is off.
func GrantStatusText(g *Grant, now time.Time, locale string, unavailable bool) string {
	enl := strings.HasPrefix(strings.ToLower(locale), "en")
	if unavailable {
		if enl {
			return "Auto-Approve: OFF (its store is unreachable, so every request waits for approval)"
		}
		return "Auto-Approve: OFF（保存先に接続できないため、すべて承認待ちになります）"
	}
	if !g.ActiveAt(now) {
		return "Auto-Approve: OFF"
	}
	list := func(xs []string, any string) string {
		if len(xs) == 0 {
			return any
		}
		return strings.Join(xs, ", ")
	}
	remaining := g.ExpiresAt.Sub(now).Round(time.Second)
	defaulted := ""
	if g.DefaultScope {
		defaulted = inLocale(enl, "\nNo scope was given, so the default scope (approval.auto_approve.default_scope) was applied; to change it, give one (e.g. /auto-approve on paths=src/ tasks=codegen).",
			"\n範囲の指定がなかったため、既定の範囲（approval.auto_approve.default_scope）を適用しました。変えるときは範囲を指定してください（例: /auto-approve on paths=src/ tasks=codegen）。")
	}
	if enl {
		return fmt.Sprintf("Auto-Approve: ON (%s left, until %s)%s%s\npaths: %s\ntasks: %s\nroutes: %s\nallowed operations: %s\ndenied operations: %s\nhard-require operations (delete, rename, secrets, push/publish, force push, network, browser, risky shell commands, cost over limit) always need approval; shell commands only run automatically with ops=shell and a path scope, when they use only read-only commands (ls, cat, grep, …) and mkdir/touch/cp/redirections within those paths.\nTurn off: /auto-approve off",
			remaining, g.ExpiresAt.UTC().Format(time.RFC3339), defaulted, similarLine(g, true), list(g.PathPrefixes, "any"), list(g.TaskTypes, "any"), list(g.Routes, "any"), list(g.AllowedOperations, "files and git only"), list(g.DeniedOperations, "none"))
	}
	return fmt.Sprintf("Auto-Approve: ON（残り %s、%s まで）%s%s\nパス: %s\nタスク種別: %s\nルート: %s\n許可する操作: %s\n禁止操作: %s\n削除・リネーム・機密・push/公開・強制 push・ネットワーク・ブラウザ・危険なシェルコマンド・コスト超過は常に承認が必要です。シェルコマンドは ops=shell とパス指定があり、読み取り専用のコマンド（ls, cat, grep など）とそのパス内への mkdir/touch/cp/リダイレクトだけのときに自動承認されます。\n停止: /auto-approve off",
		remaining, g.ExpiresAt.UTC().Format(time.RFC3339), defaulted, similarLine(g, false), list(g.PathPrefixes, "すべて"), list(g.TaskTypes, "すべて"), list(g.Routes, "すべて"), list(g.AllowedOperations, "ファイルと git のみ"), list(g.DeniedOperations, "なし"))
}

// similarLine names the job an "approve similar" grant was scoped from and its operation kinds.
func similarLine(g *Grant, en bool) string {
	if g.SimilarTo == "" && len(g.OperationKinds) == 0 {
		return ""
	}
	kinds := strings.Join(g.OperationKinds, ", ")
	if g.SimilarTo == "" {
		if en {
			return "\noperation kinds: " + kinds
		}
		return "\n操作の種類: " + kinds
	}
	if en {
		return fmt.Sprintf("\napprove similar: like %s (operation kinds: %s)", g.SimilarTo, kinds)
	}
	return fmt.Sprintf("\n類似を承認: %s と同種（操作の種類: %s）", g.SimilarTo, kinds)
}

// SimilarApprovedText confirms an "approve similar": the job is approved and what the grant
// now approves without asking, until when.
func SimilarApprovedText(jobID string, g *Grant, now time.Time, locale string) string {
	en := strings.HasPrefix(strings.ToLower(locale), "en")
	remaining := g.ExpiresAt.Sub(now).Round(time.Second)
	if en {
		return fmt.Sprintf("✅ %s approved. Similar jobs are approved automatically for %s (until %s): paths %s, task %s, route %s, operations %s. Delete, rename, secrets, push, browser, network and shell still need approval.\nTurn off: /auto-approve off",
			jobID, remaining, g.ExpiresAt.UTC().Format(time.RFC3339), strings.Join(g.PathPrefixes, ", "), strings.Join(g.TaskTypes, ", "), strings.Join(g.Routes, ", "), strings.Join(g.OperationKinds, ", "))
	}
	return fmt.Sprintf("✅ %s を承認しました。同種のジョブを %s のあいだ（%s まで）自動承認します: パス %s、タスク種別 %s、ルート %s、操作 %s。削除・リネーム・機密・push・ブラウザ・ネットワーク・シェルは引き続き承認が必要です。\n停止: /auto-approve off",
		jobID, remaining, g.ExpiresAt.UTC().Format(time.RFC3339), strings.Join(g.PathPrefixes, ", "), strings.Join(g.TaskTypes, ", "), strings.Join(g.Routes, ", "), strings.Join(g.OperationKinds, ", "))
}

// CostQuestion asks whether to continue a coder call whose estimate is over the limit (a cost
// confirmation job): the order, the estimate, the limit, the task and the two commands.
func CostQuestion(j Job, cfg PolicyConfig) string {
	task := SafeText(j.Summary, 200)
	if strings.HasPrefix(strings.ToLower(j.Locale), "en") {
		return fmt.Sprintf("💰 %s: asking %s is estimated at about $%.2f (%d tokens), over the limit ($%.2f / %d tokens).\n"+
			"Task: %s\nContinue at about $%.2f?\n/approve %s to continue · /deny %s to stop",
			j.ID, j.Order, j.Cost.EstimatedCostUSD, j.Cost.EstimatedTokens, cfg.CostLimitUSD, cfg.TokenLimit, task,
			j.Cost.EstimatedCostUSD, j.ID, j.ID)
	}
	return fmt.Sprintf("💰 %s: %s への依頼は約 $%.2f（%d トークン）の見積もりで、上限（$%.2f / %d トークン）を超えます。\n"+
		"依頼: %s\n約 $%.2f で続行しますか？\n/approve %s で続行・/deny %s で中止",
		j.ID, j.Order, j.Cost.EstimatedCostUSD, j.Cost.EstimatedTokens, cfg.CostLimitUSD, cfg.TokenLimit, task,
		j.Cost.EstimatedCostUSD, j.ID, j.ID)
}
