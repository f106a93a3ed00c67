package app_test

import (
	"errors"
	"strings"
	"testing"

	commonv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/common/v1"
	"github.com/picoclaw-suite/picoclaw/services/chat-mio/internal/app"
	"github.com/picoclaw-suite/picoclaw/services/chat-mio/internal/domain"
)

func peerErr(kind error, msg string) error {
	return &domain.PeerError{Peer: "approval", Kind: kind, Message: msg, Cause: errors.New("transport detail")}
}

// fixed is err whatever the locale.
func fixed(err error) func(string) error { return func(string) error { return err } }

// said is a peer's refusal as classify makes it for a session in loc: the peer's text for the
// user in that language (ja, en), with its stable reason.
type said struct {
	kind       error
	reason     string
	ja, en     string
	peer       string
	causeWords string
}

func (s said) in(loc string) error {
	msg := s.ja
	if loc == "en" {
		msg = s.en
	}
	peer := s.peer
	if peer == "" {
		peer = "approval"
	}
	return &domain.PeerError{Peer: peer, Kind: s.kind, Reason: s.reason, Message: msg, Cause: errors.New("transport detail " + s.causeWords)}
}

// Only a transient failure reads as "approval unreachable"; a refusal says what approval said.
func TestApprovalRequestErrorsAreToldAccurately(t *testing.T) {
	tests := []struct {
		name     string
		err      func(loc string) error
		ja, en   string
		notJA    string
		withPeer bool
	}{
		{"unavailable", fixed(peerErr(domain.ErrUnavailable, "")), "承認サービスに接続できないため", "The approval service is unreachable", "", false},
		{"invalid", said{kind: domain.ErrInvalid, ja: "提案のパッチを解釈できませんでした", en: "the patch cannot be parsed"}.in, "提案を受け付けなかったため", "did not accept the proposal", "接続できない", true},
		{"conflict", said{kind: domain.ErrConflict, ja: "ジョブ ID job_1 はほかの内容に使われています", en: "request job_1: the job id is taken by other content"}.in, "提案を受け付けなかったため", "did not accept the proposal", "接続できない", true},
		{"forbidden", said{kind: domain.ErrForbidden, ja: "line:U1 は承認者ではありません", en: "line:U1 is not an approver"}.in, "提案を受け付けなかったため", "did not accept the proposal", "接続できない", true},
		{"no text", said{kind: domain.ErrConflict}.in, "提案を受け付けなかったため、実行していません: 今の状態ではこの操作はできません。", "did not accept the proposal of job", "接続できない", false},
		{"unexpected", fixed(peerErr(nil, "")), "承認サービスでエラーが起きたため", "The approval service reported an error", "接続できない", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, loc := range []string{"ja", "en"} {
				u := newUnit(t)
				err := tt.err(loc)
				u.approvals.err = err
				res := u.send(t, "/code guide", loc)
				got := text(res)
				want := map[string]string{"ja": tt.ja, "en": tt.en}[loc]
				if !strings.Contains(got, want) || !strings.Contains(got, res.GetJobId()) {
					t.Errorf("%s: %q lacks %q", loc, got, want)
				}
				if loc == "ja" && tt.notJA != "" && strings.Contains(got, tt.notJA) {
					t.Errorf("refusal reads as unreachable: %q", got)
				}
				if tt.withPeer && !strings.Contains(got, domain.PeerMessage(err)) {
					t.Errorf("%s: peer's message lost: %q", loc, got)
				}
				if strings.Contains(got, "transport detail") {
					t.Errorf("transport detail shown: %q", got)
				}
				if len(actions(res)) != 0 || len(u.executor.executed()) != 0 {
					t.Fatal("offered or executed without approval")
				}
			}
		})
	}
}

func TestDecisionErrorsAreToldAccurately(t *testing.T) {
	tests := []struct {
		name   string
		err    said
		status app.JobStatus // what Job answers afterwards
		ja, en string
	}{
		{"unavailable", said{kind: domain.ErrUnavailable}, "", "承認サービスに接続できないため、ジョブ job_20260101_009 は決定も実行もされていません",
			"The approval service is unreachable, so job job_20260101_009 was neither decided nor run"},
		{"not found", said{kind: domain.ErrNotFound}, "", "ジョブ job_20260101_009 は見つかりませんでした", "Job job_20260101_009 was not found"},
		{"already decided", said{kind: domain.ErrConflict, reason: "ALREADY_DECIDED", ja: "ジョブ job_20260101_009 はすでに却下済みです", en: "job job_20260101_009 is already denied"},
			"denied", "ジョブ job_20260101_009 はすでに決定済みか、期限切れです（却下済み）", "Job job_20260101_009 was already decided or has expired (denied)"},
		{"conflict of a pending job", said{kind: domain.ErrConflict, reason: "SIMILAR_AUTO_APPROVE_ON",
			ja: "Auto-Approve が有効です（grant_1）。job_20260101_009 を単独で承認するか、先に Auto-Approve を止めてください",
			en: "Auto-Approve is on (grant grant_1); approve job_20260101_009 alone, or switch Auto-Approve off first"},
			app.StatusPending, "ジョブ job_20260101_009 は決定できませんでした: Auto-Approve が有効です（grant_1）",
			"Job job_20260101_009 could not be decided: Auto-Approve is on (grant grant_1)"},
		{"not an approver", said{kind: domain.ErrForbidden, reason: "NOT_AN_APPROVER", ja: "line:U1 は承認者ではありません", en: "line:U1 is not an approver"},
			"", "権限がありません", "You may not decide job job_20260101_009"},
		{"forbidden for another reason", said{kind: domain.ErrForbidden, reason: "SIMILAR_DISABLED",
			ja: "設定で Auto-Approve が無効なため（approval.auto_approve.enabled）、同種の承認もできません",
			en: "Auto-Approve is disabled by configuration (approval.auto_approve.enabled), so approve similar is too"},
			"", "ジョブ job_20260101_009 は決定できませんでした: 設定で Auto-Approve が無効なため", "Job job_20260101_009 could not be decided: Auto-Approve is disabled by configuration"},
		{"invalid", said{kind: domain.ErrInvalid, ja: "同種の承認の期間は 1m 以上にしてください（指定: 30s）", en: "approve similar: the time must be at least 1m, got 30s"},
			"", "job_20260101_001）\n同種の承認の期間は 1m 以上にしてください（指定: 30s）", "Usage: /approve <job_id>"},
		{"unexpected", said{}, "", "承認サービスでエラーが起きたため、ジョブ job_20260101_009 は決定も実行もされていません",
			"The approval service reported an error, so job job_20260101_009 was neither decided nor run"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, loc := range []string{"ja", "en"} {
				u := newUnit(t)
				u.approvals.err = tt.err.in(loc)
				u.approvals.job = app.ApprovalJob{ID: "job_20260101_009", Status: tt.status}
				got := text(u.send(t, "/approve job_20260101_009", loc))
				want := map[string]string{"ja": tt.ja, "en": tt.en}[loc]
				if !strings.Contains(got, want) {
					t.Errorf("%s: %q lacks %q", loc, got, want)
				}
				if len(u.executor.executed()) != 0 {
					t.Fatal("executed after a failed decision")
				}
			}
		})
	}
}

func TestApprovalOutcomes(t *testing.T) {
	t.Run("pending offers buttons and remembers the job", func(t *testing.T) {
		u := newUnit(t)
		u.approvals.request = app.ApprovalRequest{Outcome: app.OutcomePending, Text: "please decide"}
		res := u.send(t, "/code guide", "")
		if got := text(res); !strings.Contains(got, "please decide") || len(actions(res)) != 3 || actions(res)[2].GetKind().String() != "ACTION_KIND_APPROVE_SIMILAR" {
			t.Fatalf("reply %q %v", got, actions(res))
		}
		in := u.approvals.inputs[0]
		if in.JobID != res.GetJobId() || in.Route != "CODE2" || string(in.Proposal.Content) != "wire" || in.By.ID != approver {
			t.Fatalf("request input %+v", in)
		}
		if p := u.store.pending[session]; len(p) != 1 || p[0] != res.GetJobId() {
			t.Fatalf("pending %v", p)
		}
	})
	t.Run("auto-approved executes", func(t *testing.T) {
		u := newUnit(t)
		u.approvals.request = app.ApprovalRequest{Outcome: app.OutcomeAutoApproved}
		u.executor.res = app.Execution{Success: true, Text: "done: 1"}
		res := u.send(t, "/code guide", "")
		if got := text(res); !strings.Contains(got, "確認なしで実行しました") || !strings.Contains(got, "done: 1") {
			t.Fatalf("reply %q", got)
		}
		if ex := u.executor.executed(); len(ex) != 1 || ex[0] != res.GetJobId() {
			t.Fatalf("executed %v", ex)
		}
	})
	t.Run("pending carries approval's card with the buttons", func(t *testing.T) {
		u := newUnit(t)
		card := &commonv1.ApprovalCard{JobId: "job_x", Title: "🔐 承認リクエスト job_x"}
		u.approvals.request = app.ApprovalRequest{Outcome: app.OutcomePending, Text: "please decide", Card: card}
		res := u.send(t, "/code guide", "")
		msgs := res.GetMessages()
		if last := msgs[len(msgs)-1]; last.GetApproval().GetTitle() != card.GetTitle() || len(last.GetActions()) != 3 {
			t.Fatalf("last message %v", last)
		}
	})
	t.Run("the execution's screenshots go with its result", func(t *testing.T) {
		u := newUnit(t)
		u.approvals.request = app.ApprovalRequest{Outcome: app.OutcomeAutoApproved}
		shot := &commonv1.Image{ContentType: "image/png", Data: []byte("png"), Artifact: "a/000-screenshot.png"}
		u.executor.res = app.Execution{Success: true, Text: "done: 1", Images: []*commonv1.Image{shot}}
		res := u.send(t, "/code guide", "")
		var imgs []*commonv1.Image
		for _, m := range res.GetMessages() {
			if strings.Contains(m.GetText(), "done: 1") {
				imgs = m.GetImages()
			}
		}
		if len(imgs) != 1 || imgs[0].GetArtifact() != shot.GetArtifact() {
			t.Fatalf("messages %v", res.GetMessages())
		}
	})
	t.Run("refused says why", func(t *testing.T) {
		u := newUnit(t)
		u.approvals.request = app.ApprovalRequest{Outcome: app.OutcomeRefused, PolicyRule: "hard_deny:.git"}
		if got := text(u.send(t, "/code guide", "en")); !strings.Contains(got, "refused by policy (it will not run).\nReason: hard_deny:.git") {
			t.Fatalf("reply %q", got)
		}
		if len(u.executor.executed()) != 0 {
			t.Fatal("refused job executed")
		}
	})
	t.Run("approve without a grant does not execute", func(t *testing.T) {
		u := newUnit(t)
		u.approvals.decided = app.ApprovalJob{Status: "expired"}
		if got := text(u.send(t, "/approve job_20260101_009", "")); !strings.Contains(got, "（期限切れ）") {
			t.Fatalf("reply %q", got)
		}
		if len(u.executor.executed()) != 0 {
			t.Fatal("executed without a recorded grant")
		}
	})
	t.Run("granted but not run resumes once", func(t *testing.T) {
		u := newUnit(t)
		u.approvals.err = peerErr(domain.ErrConflict, "job is granted")
		u.approvals.job = app.ApprovalJob{Status: app.StatusGranted}
		u.executor.res = app.Execution{Text: "ran"}
		if got := text(u.send(t, "/approve job_20260101_009", "")); !strings.Contains(got, "ran") {
			t.Fatalf("reply %q", got)
		}
		if ex := u.executor.executed(); len(ex) != 1 || ex[0] != "job_20260101_009" {
			t.Fatalf("executed %v", ex)
		}
	})
}

func TestAutoApproveErrors(t *testing.T) {
	tests := []struct {
		err    said
		ja, en string
	}{
		{said{kind: domain.ErrUnavailable}, "承認サービスに接続できないため、Auto-Approve", "The approval service is unreachable, so Auto-Approve"},
		{said{kind: domain.ErrForbidden, reason: "NOT_AN_APPROVER", ja: "line:U1 は承認者ではありません", en: "line:U1 is not an approver"},
			"Auto-Approve を変更する権限がありません", "You may not change Auto-Approve"},
		{said{kind: domain.ErrForbidden, reason: "AUTO_APPROVE_DISABLED", ja: "設定で Auto-Approve が無効です（approval.auto_approve.enabled）", en: "Auto-Approve is disabled by configuration (approval.auto_approve.enabled)"},
			"Auto-Approve は変更できませんでした: 設定で Auto-Approve が無効です", "Auto-Approve could not be changed: Auto-Approve is disabled by configuration"},
		{said{kind: domain.ErrInvalid, ja: "ttl 48h0m0s は上限 24h0m0s を超えています（approval.auto_approve.max_ttl）", en: "ttl 48h0m0s exceeds the maximum 24h0m0s (approval.auto_approve.max_ttl)"},
			"使い方: /auto-approve on [ttl=30m] [paths=docs/,README.md] [tasks=docs,review] [routes=CODE1] [ops=shell] | off | status\nttl 48h0m0s は上限 24h0m0s を超えています",
			"ttl 48h0m0s exceeds the maximum 24h0m0s"},
		{said{kind: domain.ErrConflict}, "Auto-Approve は変更できませんでした: 今の状態ではこの操作はできません。", "Auto-Approve could not be changed: This cannot be done in the current state."},
		{said{}, "approval でエラーが起きました", "approval reported an error"},
	}
	for _, tt := range tests {
		for _, loc := range []string{"ja", "en"} {
			u := newUnit(t)
			u.approvals.err = tt.err.in(loc)
			got := text(u.send(t, "/auto-approve on paths=docs/", loc))
			if want := map[string]string{"ja": tt.ja, "en": tt.en}[loc]; !strings.Contains(got, want) {
				t.Errorf("%v %s: %q lacks %q", tt.err, loc, got, want)
			}
		}
	}
}

func TestExecutorErrors(t *testing.T) {
	tests := []struct {
		err    said
		ja, en string
	}{
		{said{peer: "executor", kind: domain.ErrUnavailable, causeWords: "dial tcp"}, "実行サービス（executor）に接続できなかったため", "The executor could not be reached"},
		{said{peer: "executor", kind: domain.ErrConflict, ja: "ジョブ job_20260101_009 は実行中の別のエグゼキューターが持っています", en: "job job_20260101_009 is already claimed"},
			"の実行に失敗しました: ジョブ job_20260101_009 は実行中の別のエグゼキューターが持っています", "failed to run: job job_20260101_009 is already claimed"},
		// A refusal of another kind with the executor's words (a hash mismatch) is told as it is.
		{said{peer: "executor", ja: "ジョブ job_20260101_009 の内容が承認されたものと一致しないため、実行していません", en: "job job_20260101_009: content hash mismatch"},
			"の実行に失敗しました: ジョブ job_20260101_009 の内容が承認されたものと一致しないため", "failed to run: job job_20260101_009: content hash mismatch"},
		{said{peer: "executor", kind: domain.ErrConflict}, "の実行に失敗しました: 今の状態ではこの操作はできません。", "failed to run: This cannot be done in the current state."},
		{said{peer: "executor", causeWords: "secret path /srv/x"}, "内部エラー", "internal error"},
	}
	for _, tt := range tests {
		for _, loc := range []string{"ja", "en"} {
			u := newUnit(t)
			u.approvals.decided = app.ApprovalJob{Status: app.StatusGranted}
			u.executor.err = tt.err.in(loc)
			got := text(u.send(t, "/approve job_20260101_009", loc))
			if want := map[string]string{"ja": tt.ja, "en": tt.en}[loc]; !strings.Contains(got, want) || strings.Contains(got, "/srv/x") || strings.Contains(got, "dial tcp") {
				t.Errorf("%s %s: %q lacks %q", tt.err.peer, loc, got, want)
			}
		}
	}
}

func TestPickSendsTheChosenProposal(t *testing.T) {
	u := newUnit(t)
	u.router.res = app.RouteResult{Decision: app.Decision{Route: "CODE"}, Deliberation: true, Proposals: []app.ProposalOption{
		{Order: "order1", Proposal: &app.Proposal{Order: "order1", Plan: "one", Content: []byte("p1")}},
		{Order: "order3", ErrorCode: "timeout"},
		{Order: "order2", Proposal: &app.Proposal{Order: "order2", Plan: "two", Content: []byte("p2")}},
	}}
	u.approvals.request = app.ApprovalRequest{Outcome: app.OutcomePending}
	res := u.send(t, "/deliberate guide", "")
	if got := text(res); !strings.Contains(got, "1. order1: one") || !strings.Contains(got, "2. order2: two") || len(u.approvals.inputs) != 0 {
		t.Fatalf("options %q", got)
	}
	u.send(t, "/pick "+res.GetJobId()+" 2", "")
	if in := u.approvals.inputs; len(in) != 1 || string(in[0].Proposal.Content) != "p2" || in[0].Route != "CODE2" || in[0].JobID != res.GetJobId() {
		t.Fatalf("picked %+v", in)
	}
}
