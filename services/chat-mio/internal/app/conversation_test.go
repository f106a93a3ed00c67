package app_test

import (
	"context"
	"errors"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	approvalv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/approval/v1"
	chatv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/chat/v1"
	commonv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/common/v1"
	"github.com/picoclaw-suite/picoclaw/pkg/jobid"
	"github.com/picoclaw-suite/picoclaw/pkg/llm"
	"github.com/picoclaw-suite/picoclaw/services/chat-mio/internal/app"
	"github.com/picoclaw-suite/picoclaw/services/chat-mio/internal/domain"
)

func TestChatReplyUsesPersonaPolicyOverlayAndMemory(t *testing.T) {
	e := newEnv(t)
	first := e.send(t, approver, "おはよう")
	if got := text(first); got != "はい、Mio です。" {
		t.Fatalf("CHAT reply %q (no declaration expected)", got)
	}
	e.send(t, approver, "今日の予定は？")
	calls := e.model.calls()
	if len(calls) != 2 {
		t.Fatalf("model calls = %d", len(calls))
	}
	msgs := calls[1].Messages
	sys := msgs[0].Content
	if msgs[0].Role != llm.RoleSystem || !strings.HasPrefix(sys, "# Mio persona") {
		t.Fatalf("system prompt does not start with the persona:\n%s", sys)
	}
	pol, ov := strings.Index(sys, "# ポリシー"), strings.Index(sys, "# 文脈")
	if pol < 0 || ov < pol {
		t.Fatalf("policy/overlay order wrong:\n%s", sys)
	}
	mustContain(t, sys, "job_id: job_", "ルート: CHAT")
	// The previous exchange is in the prompt and in the router's history, before the new text.
	if len(msgs) != 4 || msgs[1].Content != "おはよう" || msgs[2].Role != llm.RoleAssistant || msgs[3].Content != "今日の予定は？" {
		t.Fatalf("messages = %+v", msgs)
	}
	reqs := e.peers.Router.Requests()
	if h := reqs[1].GetHistory(); len(h) != 2 || h[0].GetText() != "おはよう" || h[1].GetRole() != "assistant" {
		t.Fatalf("router history = %v", h)
	}
	if reqs[1].GetPrevPrimaryRoute() != commonv1.Route_ROUTE_CHAT {
		t.Fatalf("prev route = %v", reqs[1].GetPrevPrimaryRoute())
	}
}

func TestPlanIsWrittenByChatModelWithDeclaration(t *testing.T) {
	e := newEnv(t)
	e.model.reply = "段取りはこうです。"
	res := e.send(t, approver, "/plan ブログ公開")
	if got := text(res); got != "【Shiro が PLAN として担当します】\n段取りはこうです。" {
		t.Fatalf("reply %q", got)
	}
	sys := e.model.calls()[0].Messages[0].Content
	mustContain(t, sys, "1. 下書き 2. レビュー 3. 公開", "締め切りはいつですか？", "ルート: PLAN")
	// Same route again: no declaration.
	if got := text(e.send(t, approver, "/plan 続き")); got != "段取りはこうです。" {
		t.Fatalf("second reply %q", got)
	}
	// The chat model failing still shows Shiro's result, labelled.
	e.model.err = errModelDown
	got := text(e.send(t, approver, "/plan もう一度"))
	mustContain(t, got, "会話モデルが応答しないため", "1. 下書き", "締め切りはいつですか？")
}

func TestWorkerRouteShowsResultWithoutChatModel(t *testing.T) {
	e := newEnv(t)
	res := e.send(t, approver, "/ops restart nginx")
	mustContain(t, text(res), "【Shiro が OPS として担当します】", "1. 下書き", "確認させてください:", "締め切りはいつですか？")
	if len(e.model.calls()) != 0 {
		t.Fatal("chat model called for OPS")
	}
	if res.GetDecision().GetRoute() != commonv1.Route_ROUTE_OPS {
		t.Fatalf("decision %v", res.GetDecision())
	}
}

func TestCommandsNeverCallModelOrRouter(t *testing.T) {
	e := newEnv(t)
	for _, tt := range []struct{ in, want string }{
		{"/frobnicate now", "知らないコマンドです"},
		{"/approve", "使い方: /approve <job_id>"},
		{"/approve job_x", "使い方: /approve <job_id>"},
		{"/deny", "使い方: /deny <job_id> [理由]"},
		{"/pick job_20260101_001", "使い方: /pick"},
		{"/auto-approve sometimes", "使い方: /auto-approve on"},
		{"/auto-approve on ttl=forever", "使い方: /auto-approve on"},
		{"/local please", "使い方: /local（引数はありません）"},
		{"/help", "/approve <job_id> — 承認して実行"},
		{"  \n ", "メッセージが空でした"},
	} {
		if got := text(e.send(t, approver, tt.in)); !strings.Contains(got, tt.want) {
			t.Errorf("%q → %q, want %q", tt.in, got, tt.want)
		}
	}
	// A malformed button press is a usage text too.
	res := e.sendReq(t, &chatv1.HandleMessageRequest{SessionId: session, Channel: "line", UserId: approver,
		Action: &commonv1.Action{Kind: commonv1.ActionKind_ACTION_KIND_PICK, JobId: "job_20260101_001", Value: "x"}})
	mustContain(t, text(res), "使い方: /pick")
	if n := len(e.model.calls()); n != 0 {
		t.Fatalf("model called %d times", n)
	}
	if n := len(e.peers.Router.Requests()); n != 0 {
		t.Fatalf("router called %d times", n)
	}
}

func TestEnglishLocale(t *testing.T) {
	e := newEnv(t)
	send := func(s string) string {
		return text(e.sendReq(t, &chatv1.HandleMessageRequest{SessionId: session, Channel: "line", UserId: approver, Text: s, Locale: "en"}))
	}
	mustContain(t, send("/nope"), "Unknown command")
	res := e.sendReq(t, &chatv1.HandleMessageRequest{SessionId: session, Channel: "line", UserId: approver, Text: codeMsg, Locale: "en"})
	mustContain(t, text(res), "[Ao (order2) is writing the proposal]", "Approval request")
	if acts := actions(res); acts[0].GetLabel() != "Approve" || acts[1].GetLabel() != "Deny" {
		t.Fatalf("labels %v", acts)
	}
	mustContain(t, send("/approve "+res.GetJobId()), "Job "+res.GetJobId()+" approved.", "Executed: 1, succeeded: 1")
	mustContain(t, send("/local"), "Local-only mode is on")
	mustContain(t, send(codeMsg), "Local-only mode is on, so the CODE route (cloud models) is refused. Send /cloud")
	mustContain(t, e.model.calls2(t, send, "hello"), "# Policy", "Answer in English")
}

// calls2 sends text and returns the system prompt the model saw.
func (m *fakeModel) calls2(t *testing.T, send func(string) string, s string) string {
	t.Helper()
	send(s)
	c := m.calls()
	return c[len(c)-1].Messages[0].Content
}

func TestLocalAndCloud(t *testing.T) {
	e := newEnv(t)
	mustContain(t, text(e.send(t, approver, "/local")), "ローカル限定モードにしました")
	res := e.send(t, approver, codeMsg)
	mustContain(t, text(res), "ローカル限定モードなので", "/cloud")
	if got := e.peers.Router.Requests(); !got[0].GetLocalOnly() {
		t.Fatal("router not told local_only")
	}
	mustContain(t, text(e.send(t, approver, "/status")), "ローカル限定 オン")
	mustContain(t, text(e.send(t, approver, "/cloud")), "解除しました")
	res = e.send(t, approver, codeMsg)
	if len(actions(res)) != 3 {
		t.Fatalf("after /cloud: %s", text(res))
	}
}

func TestStatus(t *testing.T) {
	e := newEnv(t)
	id := e.send(t, approver, codeMsg).GetJobId()
	got := text(e.send(t, approver, "/status"))
	mustContain(t, got, "chat-mio: idle", "セッション line:Uapprover: ローカル限定 オフ / 承認待ち "+id)
	e.peers.Heartbeat.SetDown(true)
	mustContain(t, text(e.send(t, approver, "/status")), "状態監視（heartbeat）に接続できませんでした", "承認待ち "+id)

	// A job decided elsewhere (web console) leaves the session's pending set.
	if _, err := e.peers.Approval.Client.Deny(t.Context(), &approvalv1.DenyRequest{JobId: id, Actor: &commonv1.Actor{Id: approver, Channel: "line"}}); err != nil {
		t.Fatal(err)
	}
	mustContain(t, text(e.send(t, approver, "/status")), "承認待ち なし")
	if got := pendingOf(t, e); len(got) != 0 {
		t.Fatalf("pending = %v", got)
	}
}

func TestPeerFailuresAreToldAndFailClosed(t *testing.T) {
	t.Run("router down", func(t *testing.T) {
		// Transient: no answer at all, the gateway keeps the event and tries it again.
		e := newEnv(t)
		e.peers.Router.SetDown(true)
		req := &chatv1.HandleMessageRequest{SessionId: session, Channel: "line", UserId: approver, Text: "hello", EventId: "ev-1"}
		if res, err := e.app.HandleMessage(context.Background(), req); !errors.Is(err, domain.ErrUnavailable) || res != nil {
			t.Fatalf("router down: %v, %v; want ErrUnavailable and no answer", res, err)
		}
		e.peers.Router.SetDown(false)
		mustContain(t, text(e.sendReq(t, req)), "はい、Mio です。")
	})
	t.Run("approval down", func(t *testing.T) {
		e := newEnv(t, withApprovalDown())
		res := e.send(t, approver, codeMsg)
		mustContain(t, text(res), "承認サービスに接続できないため", res.GetJobId(), "実行していません")
		if len(actions(res)) != 0 || e.peers.Executor.Calls() != 0 {
			t.Fatal("proposal offered or executed without approval")
		}
		mustContain(t, text(e.send(t, approver, "/approve "+res.GetJobId())), "承認サービスに接続できないため、ジョブ "+res.GetJobId()+" は決定も実行もされていません", "/approve "+res.GetJobId()+" をもう一度")
		if e.peers.Executor.Calls() != 0 {
			t.Fatal("executed while approval is down")
		}
	})
	t.Run("executor down", func(t *testing.T) {
		e := newEnv(t)
		id := e.send(t, approver, codeMsg).GetJobId()
		e.peers.Executor.SetDown(true)
		mustContain(t, text(e.send(t, approver, "/approve "+id)), "実行サービス（executor）に接続できなかったため、ジョブ "+id+" はまだ実行されていません")
		// The grant is recorded: once the executor is back, /approve again runs the job (once).
		e.peers.Executor.SetDown(false)
		mustContain(t, text(e.send(t, approver, "/approve "+id)), "実行: 1 件, 成功: 1 件")
		if got := text(e.send(t, approver, "/approve "+id)); strings.Contains(got, "成功: 1 件") {
			t.Fatalf("a completed job ran again: %s", got)
		}
	})
	t.Run("execution fails", func(t *testing.T) {
		e := newEnv(t)
		id := e.send(t, approver, codeMsg).GetJobId()
		e.peers.Executor.SetWorkspace(filepath.Join(t.TempDir(), "missing"))
		got := text(e.send(t, approver, "/approve "+id))
		mustContain(t, got, "ジョブ "+id+" の実行に失敗しました", "内部エラー")
		if strings.Contains(got, "missing") {
			t.Fatalf("internal detail leaked to the user: %s", got)
		}
	})
	t.Run("chat model down", func(t *testing.T) {
		e := newEnv(t)
		e.model.err = errModelDown
		mustContain(t, text(e.send(t, approver, "hello")), "会話モデル（ollama/chat-v1:latest）が応答しませんでした")
	})
	t.Run("unknown job", func(t *testing.T) {
		e := newEnv(t)
		mustContain(t, text(e.send(t, approver, "/approve job_20260101_999")), "ジョブ job_20260101_999 は見つかりませんでした")
	})
}

func TestRedisDown(t *testing.T) {
	e := newEnv(t, withRedisDown())
	res := e.send(t, approver, "hello")
	if !jobid.Valid(res.GetJobId()) || len(strings.TrimPrefix(res.GetJobId(), "job_20")) != 6+1+8 {
		t.Fatalf("fallback job id %q", res.GetJobId())
	}
	mustContain(t, text(res), "Redis）に接続できないため、新しいセッションとして扱っています", "はい、Mio です。")
	mustContain(t, text(e.send(t, approver, "/auto-approve on paths=docs/")), "Auto-Approve は有効にできません")
	mustContain(t, text(e.send(t, approver, "/local")), "設定を保存できませんでした")
	// Proposals still go through approval and wait for a person.
	res = e.send(t, approver, codeMsg)
	if len(actions(res)) != 3 || e.peers.Executor.Calls() != 0 {
		t.Fatalf("degraded proposal: %s", text(res))
	}
}

func TestMemoryIsBoundedAndCutOverAtMidnight(t *testing.T) {
	tokyo := mustTokyo(t)
	var mu sync.Mutex
	now := time.Date(2026, 1, 1, 23, 58, 0, 0, tokyo)
	clock := func() time.Time { mu.Lock(); defer mu.Unlock(); return now }
	e := newEnv(t, withConfig(func(c *app.Config) { c.MemoryTurns = 4; c.Now = clock }))
	for _, s := range []string{"one", "two", "three"} {
		e.send(t, approver, s)
	}
	reqs := e.peers.Router.Requests()
	h := reqs[2].GetHistory()
	if len(h) != 4 || h[0].GetText() != "one" || h[2].GetText() != "two" {
		t.Fatalf("history before the bound = %v", h)
	}
	e.send(t, approver, "four")
	h = e.peers.Router.Requests()[3].GetHistory()
	if len(h) != 4 || h[0].GetText() != "two" {
		t.Fatalf("bounded history = %v", h)
	}
	mu.Lock()
	now = time.Date(2026, 1, 2, 0, 0, 1, 0, tokyo)
	mu.Unlock()
	e.send(t, approver, "new day")
	if h = e.peers.Router.Requests()[4].GetHistory(); len(h) != 0 {
		t.Fatalf("history after midnight = %v", h)
	}
	if h := e.model.calls()[4].Messages; len(h) != 2 {
		t.Fatalf("prompt after midnight has %d messages", len(h))
	}
}

func TestInvalidSessionIsAnError(t *testing.T) {
	e := newEnv(t)
	for _, req := range []*chatv1.HandleMessageRequest{
		{SessionId: "mail:x", Text: "hi"},
		{SessionId: "line:U1", Channel: "slack", Text: "hi"},
	} {
		if _, err := e.app.HandleMessage(t.Context(), req); err == nil {
			t.Errorf("%v accepted", req)
		}
	}
	if len(e.peers.Router.Requests()) != 0 {
		t.Fatal("router called for an invalid request")
	}
}
