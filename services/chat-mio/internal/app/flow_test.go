package app_test

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	approvalv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/approval/v1"
	chatv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/chat/v1"
	commonv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/common/v1"
	"github.com/picoclaw-suite/picoclaw/pkg/jobid"
	"github.com/picoclaw-suite/picoclaw/services/chat-mio/internal/app"
	"github.com/picoclaw-suite/picoclaw/services/chat-mio/internal/domain"
	"github.com/picoclaw-suite/picoclaw/services/chat-mio/internal/peertest"
)

const codeMsg = "/code docs/guide.md を作って"

func pendingOf(t *testing.T, e *env) []string {
	t.Helper()
	s, err := e.store.Load(context.Background(), session, domain.MemoryDay(time.Now(), time.UTC), 10)
	if err != nil {
		t.Fatal(err)
	}
	return s.Pending
}

func TestCodeMessageGivesPendingJobWithButtons(t *testing.T) {
	e := newEnv(t)
	res := e.send(t, approver, codeMsg)
	id := res.GetJobId()
	if !jobid.Valid(id) {
		t.Fatalf("job id %q", id)
	}
	mustContain(t, text(res), id, "/approve "+id, "【Ao（order2）が提案を担当します】")
	acts := actions(res)
	if len(acts) != 3 || acts[0].GetKind() != commonv1.ActionKind_ACTION_KIND_APPROVE || acts[1].GetKind() != commonv1.ActionKind_ACTION_KIND_DENY ||
		acts[2].GetKind() != commonv1.ActionKind_ACTION_KIND_APPROVE_SIMILAR || acts[2].GetValue() != "30m" ||
		acts[0].GetJobId() != id || acts[1].GetJobId() != id {
		t.Fatalf("actions = %v", acts)
	}
	if j := e.peers.Job(t, id); j.GetStatus() != approvalv1.JobStatus_JOB_STATUS_PENDING {
		t.Fatalf("job status %v", j.GetStatus())
	}
	if got := pendingOf(t, e); len(got) != 1 || got[0] != id {
		t.Fatalf("pending = %v", got)
	}
	if n := len(e.model.calls()); n != 0 {
		t.Fatalf("chat model called %d times for a CODE route", n)
	}
	if e.peers.Executor.Calls() != 0 {
		t.Fatal("executor called without approval")
	}
}

func TestApproveByApproverExecutesAndReplies(t *testing.T) {
	for _, viaButton := range []bool{false, true} {
		t.Run(map[bool]string{false: "typed", true: "button"}[viaButton], func(t *testing.T) {
			e := newEnv(t)
			id := e.send(t, approver, codeMsg).GetJobId()
			req := &chatv1.HandleMessageRequest{SessionId: session, Channel: "line", UserId: approver, Text: "/approve " + strings.ToUpper(id)}
			if viaButton {
				req.Text = "ignored"
				req.Action = &commonv1.Action{Kind: commonv1.ActionKind_ACTION_KIND_APPROVE, JobId: id}
			}
			res := e.sendReq(t, req)
			if res.GetJobId() != id {
				t.Fatalf("reply job id %q, want %q", res.GetJobId(), id)
			}
			mustContain(t, text(res), "ジョブ "+id+" を承認しました", "実行: 1 件, 成功: 1 件, 失敗: 0 件")
			if b, err := os.ReadFile(filepath.Join(e.peers.Workspace, "docs/guide.md")); err != nil || string(b) != "# Guide\n" {
				t.Fatalf("workspace file: %q %v", b, err)
			}
			want := []string{"requested", "granted", "claimed", "execution_completed"}
			if got := e.peers.Events(t, id); strings.Join(got, ",") != strings.Join(want, ",") {
				t.Fatalf("events = %v, want %v", got, want)
			}
			if got := pendingOf(t, e); len(got) != 0 {
				t.Fatalf("pending after approve = %v", got)
			}
		})
	}
}

func TestApproveByNonApproverIsRefused(t *testing.T) {
	e := newEnv(t)
	id := e.send(t, approver, codeMsg).GetJobId()
	res := e.send(t, stranger, "/approve "+id)
	mustContain(t, text(res), "権限がありません")
	if e.peers.Executor.Calls() != 0 {
		t.Fatal("executor called for a refused approval")
	}
	if j := e.peers.Job(t, id); j.GetStatus() != approvalv1.JobStatus_JOB_STATUS_PENDING {
		t.Fatalf("status %v", j.GetStatus())
	}
	if got := e.peers.Events(t, id); got[len(got)-1] != "decision_rejected" {
		t.Fatalf("events = %v", got)
	}
	if got := pendingOf(t, e); len(got) != 1 {
		t.Fatalf("pending = %v", got)
	}
}

func TestDenyRecordsReason(t *testing.T) {
	e := newEnv(t)
	id := e.send(t, approver, codeMsg).GetJobId()
	res := e.send(t, approver, "/deny "+id+"  ファイル名が違う  ので")
	mustContain(t, text(res), "却下しました", "理由: ファイル名が違う  ので")
	j := e.peers.Job(t, id)
	if j.GetStatus() != approvalv1.JobStatus_JOB_STATUS_DENIED || j.GetDenyReason() != "ファイル名が違う  ので" {
		t.Fatalf("job = %v %q", j.GetStatus(), j.GetDenyReason())
	}
	if got := pendingOf(t, e); len(got) != 0 {
		t.Fatalf("pending = %v", got)
	}
	// A second decision is a conflict and says so, and by whom.
	res = e.send(t, approver, "/approve "+id)
	mustContain(t, text(res), "すでに決定済み", "却下済み, ", approver)
	if e.peers.Executor.Calls() != 0 {
		t.Fatal("denied job executed")
	}
}

func TestDenyButtonCarriesReason(t *testing.T) {
	e := newEnv(t)
	id := e.send(t, approver, codeMsg).GetJobId()
	e.sendReq(t, &chatv1.HandleMessageRequest{SessionId: session, Channel: "line", UserId: approver,
		Action: &commonv1.Action{Kind: commonv1.ActionKind_ACTION_KIND_DENY, JobId: id, Value: "not now"}})
	if j := e.peers.Job(t, id); j.GetDenyReason() != "not now" {
		t.Fatalf("deny reason %q", j.GetDenyReason())
	}
}

func TestAutoApproveScope(t *testing.T) {
	e := newEnv(t)
	res := e.send(t, approver, "/auto-approve on paths=docs/ ttl=1m")
	mustContain(t, text(res), "Auto-Approve: ON", "パス: docs\n")

	// A docs-only proposal runs without asking.
	res = e.send(t, approver, codeMsg)
	id := res.GetJobId()
	mustContain(t, text(res), "確認なしで実行しました", "実行: 1 件, 成功: 1 件")
	if len(actions(res)) != 0 {
		t.Fatalf("auto-approved reply has buttons: %v", actions(res))
	}
	if j := e.peers.Job(t, id); j.GetStatus() != approvalv1.JobStatus_JOB_STATUS_COMPLETED {
		t.Fatalf("status %v", j.GetStatus())
	}

	// A proposal deleting a file still asks.
	e.peers.Router.SetPropose(func(string) (string, commonv1.TaskType) {
		return peertest.Patch(peertest.PatchCommand{Type: "file_edit", Action: "delete", Target: "docs/guide.md"}), commonv1.TaskType_TASK_TYPE_DOCS
	})
	res = e.send(t, approver, codeMsg)
	mustContain(t, text(res), "/approve "+res.GetJobId())
	if len(actions(res)) != 3 {
		t.Fatalf("delete proposal did not ask: %s", text(res))
	}
	if _, err := os.Stat(filepath.Join(e.peers.Workspace, "docs/guide.md")); err != nil {
		t.Fatalf("file deleted without approval: %v", err)
	}
	// Outside docs/ asks too.
	e.peers.Router.SetPropose(func(string) (string, commonv1.TaskType) {
		return peertest.Patch(peertest.PatchCommand{Type: "file_edit", Action: "create", Target: "docsx/a.md", Content: "x"}), commonv1.TaskType_TASK_TYPE_DOCS
	})
	if res = e.send(t, approver, codeMsg); len(actions(res)) != 3 {
		t.Fatalf("out-of-scope proposal did not ask: %s", text(res))
	}

	res = e.send(t, approver, "/auto-approve status")
	mustContain(t, text(res), "Auto-Approve: ON")
	res = e.send(t, approver, "/auto-approve off")
	mustContain(t, text(res), "Auto-Approve: OFF")
	e.peers.Router.SetPropose(peertest.DocsPatch)
	if res = e.send(t, approver, codeMsg); len(actions(res)) != 3 {
		t.Fatalf("after off, proposal did not ask: %s", text(res))
	}
}

// TestBareAutoApproveOnSaysTheDefaultScope: a bare /auto-approve on is answered with the
// default scope it got and says that it was applied because none was given (ja and en).
func TestBareAutoApproveOnSaysTheDefaultScope(t *testing.T) {
	for _, tc := range []struct {
		locale string
		want   []string
	}{
		{"ja", []string{"Auto-Approve: ON", "範囲の指定がなかったため、既定の範囲（approval.auto_approve.default_scope）を適用しました",
			"パス: docs, README.md", "タスク種別: docs, review", "許可する操作: ファイルと git のみ"}},
		{"en", []string{"Auto-Approve: ON", "No scope was given, so the default scope (approval.auto_approve.default_scope) was applied",
			"paths: docs, README.md", "tasks: docs, review", "allowed operations: files and git only"}},
	} {
		t.Run(tc.locale, func(t *testing.T) {
			e := newEnv(t)
			res := e.sendReq(t, &chatv1.HandleMessageRequest{SessionId: session, Channel: "line", UserId: approver, Text: "/auto-approve on", Locale: tc.locale})
			mustContain(t, text(res), tc.want...)
			// A scope given is not the default one, and the reply does not say it is.
			res = e.sendReq(t, &chatv1.HandleMessageRequest{SessionId: session, Channel: "line", UserId: approver, Text: "/auto-approve on paths=docs/", Locale: tc.locale})
			if got := text(res); strings.Contains(got, "approval.auto_approve.default_scope") {
				t.Errorf("a grant with a scope is said to have the default one: %s", got)
			}
		})
	}
}

func TestAutoApproveOptionsReachApproval(t *testing.T) {
	e := newEnv(t)
	e.send(t, approver, "/auto-approve on ttl=30m paths=docs/,README.md tasks=docs,review routes=CODE1,order2")
	res := e.send(t, approver, "/auto-approve status")
	mustContain(t, text(res), "パス: docs, README.md", "タスク種別: docs, review", "ルート: CODE1, CODE2")
	// order2 route is within scope; docs task type too.
	res = e.send(t, approver, codeMsg)
	mustContain(t, text(res), "確認なしで実行しました")
	// Non-approvers cannot change it.
	res = e.send(t, stranger, "/auto-approve off")
	mustContain(t, text(res), "Auto-Approve を変更する権限がありません")
}

func TestSameJobIDInReplyLogsAndAudit(t *testing.T) {
	e := newEnv(t)
	res := e.send(t, approver, codeMsg)
	id := res.GetJobId()
	for _, m := range res.GetMessages() {
		if m.GetJobId() != id {
			t.Fatalf("message job id %q, want %q", m.GetJobId(), id)
		}
	}
	e.send(t, approver, "/approve "+id)

	for name, seen := range map[string][]string{
		"router":   e.peers.Router.SeenBaggage(),
		"executor": e.peers.Executor.SeenBaggage(),
	} {
		if len(seen) == 0 {
			t.Fatalf("%s received no call", name)
		}
		for _, got := range seen {
			if got != id {
				t.Fatalf("%s saw baggage job_id %q, want %q", name, got, id)
			}
		}
	}
	for name, lines := range map[string][]map[string]any{
		"chat-mio": e.logs.Records(), "router-shiro": e.peers.RouterSrv.Logs.Records(), "approval": e.peers.Approval.Logs.Records(),
		"executor": e.peers.ExecutorSrv.Logs.Records(),
	} {
		n := 0
		for _, l := range lines {
			// Start-up and shutdown lines are about no job.
			if l["msg"] == "server.started" || l["msg"] == "server.stopped" || l["msg"] == "approval.policy_loaded" ||
				l["msg"] == "approval.sweeper_active" {
				continue
			}
			n++
			got, _ := l["job_id"].(string)
			if got != id && !(name == "chat-mio" && jobid.Valid(got)) {
				t.Errorf("%s log line without job id %s: %v", name, id, l)
			}
		}
		if n == 0 {
			t.Errorf("%s wrote no log line for the message", name)
		}
	}
	// chat-mio's lines of the first message (through the approval request) carry exactly id.
	for _, l := range e.logs.Records() {
		if l["msg"] == "approval.requested" && l["job_id"] != id {
			t.Errorf("approval.requested logged with %v", l["job_id"])
		}
	}
	e.peers.Events(t, id) // every audit event names the job
}

func TestConcurrentMessagesKeepEveryPendingJob(t *testing.T) {
	e := newEnv(t)
	const n = 8
	ids := make([]string, n)
	var wg sync.WaitGroup
	for i := range n {
		wg.Add(1)
		go func() {
			defer wg.Done()
			res, err := e.app.HandleMessage(context.Background(), &chatv1.HandleMessageRequest{SessionId: session, Channel: "line", UserId: approver, Text: codeMsg})
			if err != nil {
				t.Errorf("message %d: %v", i, err)
				return
			}
			ids[i] = res.GetJobId()
		}()
	}
	wg.Wait()
	got := pendingOf(t, e)
	if len(got) != n {
		t.Fatalf("pending = %v, want %d ids", got, n)
	}
	for _, id := range ids {
		found := false
		for _, g := range got {
			found = found || g == id
		}
		if !found {
			t.Fatalf("pending %v lost %s", got, id)
		}
	}
	// Both turns of every message are in memory.
	s, err := e.store.Load(context.Background(), session, domain.MemoryDay(time.Now(), mustTokyo(t)), 100)
	if err != nil {
		t.Fatal(err)
	}
	if len(s.Memory) != 2*n {
		t.Fatalf("memory has %d turns, want %d", len(s.Memory), 2*n)
	}
}

func mustTokyo(t *testing.T) *time.Location {
	t.Helper()
	l, err := time.LoadLocation("Asia/Tokyo")
	if err != nil {
		t.Fatal(err)
	}
	return l
}

func TestResultAfterReplyIsPushed(t *testing.T) {
	e := newEnv(t, withConfig(func(c *app.Config) { c.ReplyBudget = 50 * time.Millisecond }))
	e.peers.Executor.SetDelay(500 * time.Millisecond)
	id := e.send(t, approver, codeMsg).GetJobId()
	res := e.send(t, approver, "/approve "+id)
	if !res.GetAsyncPending() {
		t.Fatalf("async_pending not set: %s", text(res))
	}
	mustContain(t, text(res), "実行しています")
	p := waitPush(t, e.peers.Gateway)
	if p.GetSessionId() != session || p.GetJobId() != id || p.GetRetryKey() != id+":result" {
		t.Fatalf("push = %v", p)
	}
	mustContain(t, p.GetMessages()[0].GetText(), "実行: 1 件, 成功: 1 件")
}

// A coder's failure in a deliberation is said by its class in the user's language; the
// coder's message (with the provider's words) stays in the log.
func TestDeliberationProposalFailureInBothLanguages(t *testing.T) {
	for _, tc := range []struct{ locale, want, other string }{
		{"ja", "order3: 提案できませんでした（モデルが時間内に応答しませんでした）", "did not answer"},
		{"en", "order3: no proposal (the model did not answer in time)", "応答"},
	} {
		e := newEnv(t)
		res := e.sendReq(t, &chatv1.HandleMessageRequest{SessionId: session, Channel: "line", UserId: approver,
			Text: "/deliberate docs/guide.md を作って", Locale: tc.locale})
		mustContain(t, text(res), tc.want)
		for _, banned := range []string{"upstream", "api.example.com", "timeout", tc.other} {
			if strings.Contains(text(res), banned) {
				t.Errorf("%s: %q in the reply: %s", tc.locale, banned, text(res))
			}
		}
	}
}

func TestDeliberationAndPick(t *testing.T) {
	e := newEnv(t)
	res := e.send(t, approver, "/deliberate docs/guide.md を作って")
	id := res.GetJobId()
	mustContain(t, text(res), "【合議: 複数のコーダーが提案しました】", "/pick "+id, "1. order1", "2. order2", "order3: 提案できませんでした（モデルが時間内に応答しませんでした）")
	if strings.Contains(text(res), "upstream") || strings.Contains(text(res), "timeout") {
		t.Errorf("the coder's own words reached the user: %s", text(res))
	}
	acts := actions(res)
	if len(acts) != 2 || acts[1].GetKind() != commonv1.ActionKind_ACTION_KIND_PICK || acts[1].GetValue() != "2" {
		t.Fatalf("actions = %v", acts)
	}
	res = e.sendReq(t, &chatv1.HandleMessageRequest{SessionId: session, Channel: "line", UserId: approver, Action: acts[1]})
	mustContain(t, text(res), "/approve "+id)
	j := e.peers.Job(t, id)
	if j.GetOrder() != "order2" || j.GetRoute() != commonv1.Route_ROUTE_CODE2 {
		t.Fatalf("picked job = %s %v", j.GetOrder(), j.GetRoute())
	}
	res = e.send(t, approver, "/pick "+id+" 3")
	mustContain(t, text(res), "候補 3 は見つかりませんでした")
}

func TestJobIDFromBaggage(t *testing.T) {
	cases := []struct {
		name, baggage string
		reuse         bool
	}{
		{"gateway allocated", "job_20261121_901", true},
		{"fallback form", "job_20261121_0a1b2c3d", true},
		{"not a job id", "job_x", false},
		{"none", "", false},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			e := newEnv(t)
			ctx := context.Background()
			if tc.baggage != "" {
				ctx = jobid.WithJobID(ctx, tc.baggage)
			}
			res, err := e.app.HandleMessage(ctx, &chatv1.HandleMessageRequest{SessionId: session, Channel: "line", UserId: approver, Text: codeMsg})
			if err != nil {
				t.Fatal(err)
			}
			id := res.GetJobId()
			if !jobid.Valid(id) || (id == tc.baggage) != tc.reuse {
				t.Fatalf("job id %q with baggage %q, reuse=%v", id, tc.baggage, tc.reuse)
			}
			if j := e.peers.Job(t, id); j.GetStatus() != approvalv1.JobStatus_JOB_STATUS_PENDING {
				t.Fatalf("approval has no pending job %s: %v", id, j)
			}
			for _, got := range e.peers.Router.SeenBaggage() {
				if got != id {
					t.Fatalf("router saw job_id %q, want %q", got, id)
				}
			}
		})
	}
}

// A gateway that redelivers an event (its answer could not be sent, or it restarted) gets the
// reply already given: the turn does not run again and no second proposal is made.
func TestRedeliveredEventGetsTheSameReply(t *testing.T) {
	e := newEnv(t)
	req := &chatv1.HandleMessageRequest{SessionId: session, Channel: "line", UserId: approver, Text: codeMsg, EventId: "01HREDELIVERED0001"}
	first := e.sendReq(t, req)
	second := e.sendReq(t, req)
	if second.GetJobId() != first.GetJobId() || text(second) != text(first) {
		t.Fatalf("redelivery answered differently:\n%s\n---\n%s", text(first), text(second))
	}
	if n := len(e.peers.Router.Requests()); n != 1 {
		t.Fatalf("the turn ran %d times", n)
	}
	// Another event with the same text is a new turn.
	other := proto.Clone(req).(*chatv1.HandleMessageRequest)
	other.EventId = "01HREDELIVERED0002"
	if third := e.sendReq(t, other); third.GetJobId() == first.GetJobId() {
		t.Fatal("a new event reused the earlier reply")
	}
}

// TestApprovalRefusalsInTheSessionsLanguage: approval's refusals reach the user in the
// session's language (its text for the user, not its English for logs).
func TestApprovalRefusalsInTheSessionsLanguage(t *testing.T) {
	for _, tc := range []struct {
		locale, text string
		want         []string
		not          string
	}{
		{"ja", "/auto-approve on ttl=1000h paths=docs/", []string{"使い方: /auto-approve", "ttl 1000h0m0s は上限", "を超えています（approval.auto_approve.max_ttl）"}, "exceeds"},
		{"en", "/auto-approve on ttl=1000h paths=docs/", []string{"Usage: /auto-approve", "ttl 1000h0m0s exceeds the maximum"}, "上限"},
		{"ja", "/auto-approve on ops=shell", []string{"ops=shell にはパスの範囲（paths=...）が必要です"}, "needs a path scope"},
		{"en", "/auto-approve on ops=shell", []string{"ops=shell needs a path scope (paths=...)"}, "パスの範囲"},
	} {
		e := newEnv(t)
		res := e.sendReq(t, &chatv1.HandleMessageRequest{SessionId: session, Channel: "line", UserId: approver, Text: tc.text, Locale: tc.locale})
		mustContain(t, text(res), tc.want...)
		if strings.Contains(text(res), tc.not) {
			t.Errorf("%s %q: the other language in the reply: %s", tc.locale, tc.text, text(res))
		}
	}
	// A decision about a job decided already names its state in the session's language.
	for _, tc := range []struct{ locale, want string }{{"ja", "（却下済み, "}, {"en", "(denied, "}} {
		e := newEnv(t)
		id := e.sendReq(t, &chatv1.HandleMessageRequest{SessionId: session, Channel: "line", UserId: approver, Text: codeMsg, Locale: tc.locale}).GetJobId()
		e.sendReq(t, &chatv1.HandleMessageRequest{SessionId: session, Channel: "line", UserId: approver, Text: "/deny " + id, Locale: tc.locale})
		res := e.sendReq(t, &chatv1.HandleMessageRequest{SessionId: session, Channel: "line", UserId: approver, Text: "/approve " + id, Locale: tc.locale})
		mustContain(t, text(res), tc.want)
	}
}

// TestRefusedProposalSaysWhyInTheUsersLanguage: a proposal the policy refuses (it writes inside
// .git) is answered with approval's reason in the user's language — no English of ours in the
// Japanese reply — and the job is refused, never run.
func TestRefusedProposalSaysWhyInTheUsersLanguage(t *testing.T) {
	for _, tc := range []struct {
		locale      string
		want        []string
		notExpected string
	}{
		{"ja", []string{"はポリシーにより拒否されました（実行しません）。\n理由: 操作 1（file_edit update）は .git ディレクトリの中", "常に禁止されています"}, "never allowed"},
		{"en", []string{"was refused by policy (it will not run).\nReason: operation 1 (file_edit update)", "inside a .git directory, which is never allowed"}, "禁止"},
	} {
		t.Run(tc.locale, func(t *testing.T) {
			e := newEnv(t)
			e.peers.Router.SetPropose(func(string) (string, commonv1.TaskType) {
				return peertest.Patch(peertest.PatchCommand{Type: "file_edit", Action: "update", Target: ".git/config", Content: "x"}), commonv1.TaskType_TASK_TYPE_DOCS
			})
			res := e.sendReq(t, &chatv1.HandleMessageRequest{SessionId: session, Channel: "line", UserId: approver, Text: codeMsg, Locale: tc.locale})
			got := text(res)
			mustContain(t, got, append([]string{res.GetJobId()}, tc.want...)...)
			if strings.Contains(got, tc.notExpected) || len(actions(res)) != 0 {
				t.Fatalf("reply %q (actions %v)", got, actions(res))
			}
			if j := e.peers.Job(t, res.GetJobId()); j.GetStatus() != approvalv1.JobStatus_JOB_STATUS_REFUSED || j.GetPolicyRule() != "hard_deny.path" {
				t.Fatalf("job %v by %s", j.GetStatus(), j.GetPolicyRule())
			}
			if e.peers.Executor.Calls() != 0 {
				t.Fatal("a refused job ran")
			}
		})
	}
}
