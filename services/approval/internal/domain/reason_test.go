package domain

import (
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"
)

// refusedJob records a request and the policy's refusal d in the audit log, as RequestApproval
// does, and rebuilds the job from the sealed events.
func refusedJob(t *testing.T, locale string, d Decision) (Job, []Event) {
	t.Helper()
	j := Job{ID: "job_20260301_021", Locale: locale, ContentHash: "sha256:x", PolicyReason: d.Reason, PolicyReasonCode: d.ReasonCode,
		PolicyReasonArgs: d.ReasonArgs, ExpiresAt: t0.Add(time.Hour)}
	return rebuilt(t, j.ID,
		Draft{Type: EventRequested, Actor: Actor{ID: "U1", Channel: "line"}, At: t0, PolicyRule: d.Rule, Payload: j},
		Draft{Type: EventRefused, Actor: System, Channel: System.Channel, At: t0, PolicyRule: d.Rule,
			Payload: ReasonPayload{Reason: d.Reason, ReasonCode: d.ReasonCode, ReasonArgs: d.ReasonArgs}})
}

// rebuilt seals drafts as the stream of id and folds them into a job, checking the chain.
func rebuilt(t *testing.T, id string, drafts ...Draft) (Job, []Event) {
	t.Helper()
	var evs []Event
	seq, hash := int64(0), ""
	for _, d := range drafts {
		e, err := testKeys.Seal(id, seq, hash, d)
		if err != nil {
			t.Fatal(err)
		}
		evs = append(evs, e)
		seq, hash = e.Seq, e.Hash
	}
	if err := testKeys.VerifyChain(evs); err != nil {
		t.Fatal(err)
	}
	j, err := Rebuild(evs)
	if err != nil {
		t.Fatal(err)
	}
	return j, evs
}

var japanese = regexp.MustCompile(`[\p{Hiragana}\p{Katakana}\p{Han}]`)

// A proposal refused by a built-in rule is told in the job's language, and the audit log keeps
// the reason machine-readable: the English text, the code and its arguments.
func TestRefusedNoticeInBothLanguages(t *testing.T) {
	cfg := PolicyConfig{HardDenyPaths: []string{".env"}}
	d := Evaluate(cfg, PolicyInput{Patch: mustParse(t, `[{"type":"file_edit","action":"update","target":"app/.env","content":"x"}]`)}, nil, t0)
	if d.Outcome != OutcomeRefused || d.ReasonCode != CodeDenyPath || !slices.Equal(d.ReasonArgs, []string{"1", "file_edit update", "app/.env", ".env"}) {
		t.Fatalf("decision %+v", d)
	}
	for _, tc := range []struct{ locale, want string }{
		{"ja", "⛔ job_20260301_021 はポリシーにより拒否されました（hard_deny.path）。実行されません。\n理由: 操作 1（file_edit update）は app/.env に触れます。このパスは常に禁止されています（.env）"},
		{"en", "⛔ job_20260301_021 was refused by policy (hard_deny.path); it will not run.\nReason: operation 1 (file_edit update) touches app/.env, which is never allowed (.env)"},
	} {
		j, evs := refusedJob(t, tc.locale, d)
		if got := RefusedText(j); got != tc.want {
			t.Errorf("%s:\n got %q\nwant %q", tc.locale, got, tc.want)
		}
		var payload map[string]any
		if err := json.Unmarshal(evs[1].Payload, &payload); err != nil {
			t.Fatal(err)
		}
		if payload["reason"] != "operation 1 (file_edit update) touches app/.env, which is never allowed (.env)" || payload["reason_code"] != CodeDenyPath ||
			len(payload["reason_args"].([]any)) != 4 {
			t.Errorf("refused payload %s", evs[1].Payload)
		}
	}
	// The other locale of the same job: the reason follows the reader.
	j, _ := refusedJob(t, "ja", d)
	if got := j.PolicyReasonIn("en"); got != d.Reason {
		t.Errorf("en reason of a ja job: %q", got)
	}
}

// An operator's rule's reason is its author's words, inside the localised frame.
func TestRefusedByAnOperatorsRule(t *testing.T) {
	d := Decision{Outcome: OutcomeRefused, Rule: "never-prod", Reason: "production is deployed by hand (deploy/prod/app.yaml)"}
	j, _ := refusedJob(t, "ja", d)
	if got, want := RefusedText(j), "⛔ job_20260301_021 はポリシーにより拒否されました（never-prod）。実行されません。\n理由: production is deployed by hand (deploy/prod/app.yaml)"; got != want {
		t.Errorf("got %q, want %q", got, want)
	}
}

// Audit rows written before reasons had codes carry the English text only: they still verify,
// rebuild and are shown — the text as it was recorded, in the reader's frame.
func TestOldAuditRowsWithoutReasonCodes(t *testing.T) {
	const old = "operation 1 (file_edit update) touches .env, which is never allowed (.env)"
	// The payloads exactly as the earlier release encoded them.
	j := Job{ID: "job_20260301_022", Locale: "ja", ContentHash: "sha256:x", PolicyReason: old, ExpiresAt: t0.Add(time.Hour)}
	job, evs := rebuilt(t, j.ID,
		Draft{Type: EventRequested, Actor: Actor{ID: "U1", Channel: "line"}, At: t0, PolicyRule: RuleHardDenyPath, Payload: j},
		Draft{Type: EventRefused, Actor: System, Channel: System.Channel, At: t0, PolicyRule: RuleHardDenyPath,
			Payload: json.RawMessage(`{"reason":"` + old + `","policy_hash":"sha256:p"}`)})
	if string(evs[1].Payload) != `{"reason":"`+old+`","policy_hash":"sha256:p"}` {
		t.Fatalf("payload re-encoded: %s", evs[1].Payload)
	}
	if job.Status != StatusRefused || job.PolicyReason != old || job.PolicyReasonCode != "" || job.PolicyReasonArgs != nil {
		t.Fatalf("job %+v", job)
	}
	for _, locale := range []string{"ja", "en"} {
		if got := job.PolicyReasonIn(locale); got != old {
			t.Errorf("%s: %q", locale, got)
		}
	}
	if got := RefusedText(job); got != "⛔ job_20260301_022 はポリシーにより拒否されました（hard_deny.path）。実行されません。\n理由: "+old {
		t.Errorf("old row: %q", got)
	}
	// An old auto-approval and its revocation, reasons without codes, likewise.
	auto := Job{ID: "job_20260301_023", Locale: "en", ContentHash: "sha256:x", ExpiresAt: t0.Add(time.Hour)}
	job, _ = rebuilt(t, auto.ID,
		Draft{Type: EventRequested, Actor: Actor{ID: "U1", Channel: "line"}, At: t0, PolicyRule: RuleAutoApprove, Payload: auto},
		Draft{Type: EventAutoApproved, Actor: System, Channel: System.Channel, At: t0, PolicyRule: RuleAutoApprove,
			Payload: json.RawMessage(`{"grant_id":"g1","reason":"within the Auto-Approve grant g1 until 2026-03-01T10:00:00Z"}`)},
		Draft{Type: EventAutoApprovalRevoked, Actor: System, Channel: System.Channel, At: t0, PolicyRule: RuleGrantInactive,
			Payload: json.RawMessage(`{"reason":"Auto-Approve was switched off"}`)})
	if job.Status != StatusPending || job.PolicyReasonIn("ja") != "Auto-Approve was switched off" || job.PolicyReasonCode != "" {
		t.Fatalf("revoked old row: %+v", job)
	}
	// A new revocation has its code: said in the reader's language.
	j2, _ := rebuilt(t, auto.ID,
		Draft{Type: EventRequested, Actor: Actor{ID: "U1", Channel: "line"}, At: t0, PolicyRule: RuleAutoApprove, Payload: auto},
		Draft{Type: EventAutoApproved, Actor: System, Channel: System.Channel, At: t0, PolicyRule: RuleAutoApprove,
			Payload: AutoApprovedPayload{GrantID: "g1", Reason: "x"}})
	j2.Status = StatusAutoApproved
	revoke := j2.RevokeAutoApproval(CodeRevokedSwitchedOff, t0)
	if p := revoke[0].Payload.(ReasonPayload); p.Reason != "Auto-Approve was switched off" || p.ReasonCode != CodeRevokedSwitchedOff {
		t.Fatalf("revocation payload %+v", p)
	}
}

// The approval request says every built-in requirement in the job's language: the Japanese
// request has none of the English details, the English one none of the Japanese words.
func TestRequestWithHardRequireDetailsInBothLanguages(t *testing.T) {
	cfg := PolicyConfig{CostLimitUSD: 1, TokenLimit: 100000}
	p := mustParse(t, "```json\n"+`[{"type":"file_edit","action":"delete","target":"docs/old.md"},`+
		`{"type":"git_operation","action":"push","target":"https://git.example.com/team/repo.git","metadata":{"branch":"main","force":"true"}}]`+
		"\n```\n```unknown\nwhat is this\n```\n")
	in := PolicyInput{Patch: p, Cost: CostHint{EstimatedCostUSD: 2.5, EstimatedTokens: 250000}, ProposalUsesBrowser: true}
	d := Evaluate(cfg, in, nil, t0)
	if d.Outcome != OutcomePending || len(d.Hits) < 6 {
		t.Fatalf("decision %+v", d)
	}
	for _, h := range d.Hits {
		if h.Code == "" {
			t.Errorf("built-in hit %s has no code", h.Rule)
		}
	}
	j := Job{ID: "job_20260301_031", ExpiresAt: t0.Add(30 * time.Minute), Cost: in.Cost, AffectedPaths: p.AffectedPaths}
	const push = "git push --force https://git.example.com/team/repo.git refs/heads/main:refs/heads/main"
	for _, tc := range []struct {
		locale string
		want   []string
		banned *regexp.Regexp
	}{
		{"ja", []string{"要注意の操作:", "#1 削除: file_edit delete docs/old.md", "#2 リモートへの push: " + push, "#2 強制 push: " + push,
			"#2 ネットワーク通信: " + push, "コスト超過: 見積もり $2.50 / 250000 トークン、上限 $1.00 / 100000 トークン",
			"ブラウザ使用の申告: 提案がブラウザを使うと申告しています", "解釈できないブロック: 1 個"},
			regexp.MustCompile(`delete:|files written|estimate|tokens|declares|not understood|force push|network access`)},
		{"en", []string{"Needs attention:", "#1 delete: file_edit delete docs/old.md", "#2 push to a remote: " + push, "#2 force push: " + push,
			"#2 network access: " + push, "cost over limit: estimate $2.50 / 250000 tokens, limit $1.00 / 100000 tokens",
			"browser declared: the proposal declares browser use", "blocks not understood: 1"}, japanese},
	} {
		j.Locale = tc.locale
		text := RequestText(j, p, d.Hits, time.UTC)
		for _, want := range tc.want {
			if !strings.Contains(text, want) {
				t.Errorf("%s request lacks %q:\n%s", tc.locale, want, text)
			}
		}
		attention := text[strings.Index(text, map[string]string{"ja": "要注意の操作", "en": "Needs attention"}[tc.locale]):]
		attention = attention[:strings.Index(attention, map[string]string{"ja": "リスク:", "en": "Risk:"}[tc.locale])]
		for _, line := range strings.Split(attention, "\n") {
			// What the patch says (the push command) is data; the words around it are ours.
			if w := tc.banned.FindString(strings.ReplaceAll(strings.ReplaceAll(line, push, ""), "file_edit delete docs/old.md", "")); w != "" {
				t.Errorf("%s request line %q has %q", tc.locale, line, w)
			}
		}
		card := RequestCard(j, p, d.Hits, time.UTC, "")
		if !slices.ContainsFunc(card.Facts, func(f string) bool { return strings.Contains(f, tc.want[1]) }) {
			t.Errorf("%s card facts lack %q: %v", tc.locale, tc.want[1], card.Facts)
		}
	}
	// The pending reason is the first requirement, in the reader's language; the audit log's
	// English text is unchanged.
	if d.Reason != "needs a person: hard_require.delete (file_edit delete docs/old.md)" || d.ReasonIn("ja") != "削除: file_edit delete docs/old.md" {
		t.Errorf("pending reason %q / %q", d.Reason, d.ReasonIn("ja"))
	}
}

// What the shell analyzer found is said in the job's language inside the approval request,
// and the pending reason with it; the audit log keeps the English detail as it was.
func TestRequestWithShellFindingsInBothLanguages(t *testing.T) {
	p := mustParse(t, `[{"type":"shell_command","action":"run","target":"sleep 60 & rm -rf build"}]`)
	d := Evaluate(PolicyConfig{}, PolicyInput{Patch: p}, nil, t0)
	if d.Outcome != OutcomePending || len(d.Hits) != 2 {
		t.Fatalf("decision %+v", d)
	}
	if d.Reason != "needs a person: hard_require.delete (rm -rf build)" || d.Hits[1].Detail != "runs in the background: sleep 60" {
		t.Errorf("English texts changed: %q, %q", d.Reason, d.Hits[1].Detail)
	}
	j := Job{ID: "job_20260301_041", ExpiresAt: t0.Add(30 * time.Minute), AffectedPaths: p.AffectedPaths}
	for _, tc := range []struct {
		locale, reason string
		want           []string
		banned         *regexp.Regexp
	}{
		{"ja", "削除: コマンド rm -rf build",
			[]string{"#1 削除: コマンド rm -rf build", "#1 バックグラウンドでの実行: バックグラウンドで実行します: sleep 60"},
			regexp.MustCompile(`runs in the background|SHELL_`)},
		{"en", "delete: rm -rf build",
			[]string{"#1 delete: rm -rf build", "#1 runs in the background: runs in the background: sleep 60"}, japanese},
	} {
		j.Locale = tc.locale
		text := RequestText(j, p, d.Hits, time.UTC)
		for _, want := range tc.want {
			if !strings.Contains(text, want) {
				t.Errorf("%s request lacks %q:\n%s", tc.locale, want, text)
			}
		}
		if w := tc.banned.FindString(text); w != "" {
			t.Errorf("%s request has %q:\n%s", tc.locale, w, text)
		}
		if got := d.ReasonIn(tc.locale); got != tc.reason {
			t.Errorf("%s reason %q, want %q", tc.locale, got, tc.reason)
		}
	}
	// Recorded and rebuilt from the audit log, the reason is still said in the reader's language.
	job, _ := refusedJob(t, "ja", d)
	if got := job.PolicyReasonIn("ja"); got != "削除: コマンド rm -rf build" {
		t.Errorf("rebuilt reason %q", got)
	}
	// A hit recorded before findings had codes is said with its English detail.
	old := Hit{Rule: RuleHardRequire + "background", Op: 0, Detail: "runs in the background: sleep 60", Code: CodeRequireBackground,
		Args: []string{"runs in the background: sleep 60"}}
	if got := old.TextIn("ja"); got != "バックグラウンドでの実行: runs in the background: sleep 60" {
		t.Errorf("old hit %q", got)
	}
}

// Why a shell command is outside an Auto-Approve grant is said in the reader's language; the
// English reason is the audit log's text as before.
func TestShellScopeReasonInBothLanguages(t *testing.T) {
	g := &Grant{ID: "g", AllowedOperations: []string{OpsShell}, PathPrefixes: []string{"docs"}, ExpiresAt: t0.Add(time.Hour)}
	p := mustParse(t, `[{"type":"shell_command","action":"run","target":"make docs"}]`)
	d := Evaluate(PolicyConfig{}, PolicyInput{Patch: p}, g, t0)
	if d.Outcome != OutcomePending || d.Rule != RuleScopeShellCommand {
		t.Fatalf("decision %+v", d)
	}
	const en = "operation 1 is a shell command that always needs approval: make is not a command that runs without approval"
	if d.Reason != en {
		t.Errorf("English reason %q", d.Reason)
	}
	for locale, want := range map[string]string{
		"ja": "操作 1 は常に承認が必要なシェルコマンドです: make は承認なしで実行できるコマンドではありません",
		"en": en,
	} {
		if got := d.ReasonIn(locale); got != want {
			t.Errorf("%s: %q, want %q", locale, got, want)
		}
	}
	job, _ := refusedJob(t, "ja", d)
	if got := job.PolicyReasonIn("ja"); got != "操作 1 は常に承認が必要なシェルコマンドです: make は承認なしで実行できるコマンドではありません" {
		t.Errorf("rebuilt: %q", got)
	}
	// A reason recorded before the analyzer's codes keeps its English words.
	if got := ReasonText("ja", CodeScopeShellCommand, []string{"1", "make is not a command that runs without approval"}, en); got != "操作 1 は常に承認が必要なシェルコマンドです: make is not a command that runs without approval" {
		t.Errorf("old reason: %q", got)
	}
}
