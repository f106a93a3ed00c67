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

// Only a transient failure reads as "approval unreachable"; a refusal says what approval said.
func TestApprovalRequestErrorsAreToldAccurately(t *testing.T) {
	tests := []struct {
		name     string
		err      error
		ja, en   string
		notJA    string
		withPeer bool
	}{
		{"unavailable", peerErr(domain.ErrUnavailable, "connection refused"), "承認サービスに接続できないため", "The approval service is unreachable", "", false},
		{"invalid", peerErr(domain.ErrInvalid, "patch: unknown command type"), "提案を受け付けなかったため", "did not accept the proposal", "接続できない", true},
		{"conflict", peerErr(domain.ErrConflict, "job already exists"), "提案を受け付けなかったため", "did not accept the proposal", "接続できない", true},
		{"forbidden", peerErr(domain.ErrForbidden, "requester not allowed"), "提案を受け付けなかったため", "did not accept the proposal", "接続できない", true},
		{"unexpected", peerErr(nil, "internal error"), "承認サービスでエラーが起きたため", "The approval service reported an error", "接続できない", false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, loc := range []string{"ja", "en"} {
				u := newUnit(t)
				u.approvals.err = tt.err
				res := u.send(t, "/code guide", loc)
				got := text(res)
				want := map[string]string{"ja": tt.ja, "en": tt.en}[loc]
				if !strings.Contains(got, want) || !strings.Contains(got, res.GetJobId()) {
					t.Errorf("%s: %q lacks %q", loc, got, want)
				}
				if loc == "ja" && tt.notJA != "" && strings.Contains(got, tt.notJA) {
					t.Errorf("refusal reads as unreachable: %q", got)
				}
				if tt.withPeer && !strings.Contains(got, domain.PeerMessage(tt.err)) {
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
		err    error
		status app.JobStatus // what Job answers afterwards
		ja, en string
	}{
		{"unavailable", peerErr(domain.ErrUnavailable, "connection refused"), "", "承認サービスに接続できないため、ジョブ job_20260101_009 は決定も実行もされていません",
			"The approval service is unreachable, so job job_20260101_009 was neither decided nor run"},
		{"not found", peerErr(domain.ErrNotFound, "job not found"), "", "ジョブ job_20260101_009 は見つかりませんでした", "Job job_20260101_009 was not found"},
		{"already decided", peerErr(domain.ErrConflict, "job is denied"), "denied", "ジョブ job_20260101_009 はすでに決定済みか、期限切れです（denied）",
			"Job job_20260101_009 was already decided or has expired (denied)"},
		{"not an approver", peerErr(domain.ErrForbidden, "not an approver"), "", "権限がありません", "You may not decide job job_20260101_009"},
		{"invalid", peerErr(domain.ErrInvalid, "bad job id"), "", "job_20260101_001）\nbad job id", "Usage: /approve <job_id>"},
		{"unexpected", peerErr(nil, "internal error"), "", "承認サービスでエラーが起きたため、ジョブ job_20260101_009 は決定も実行もされていません",
			"The approval service reported an error, so job job_20260101_009 was neither decided nor run"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			for _, loc := range []string{"ja", "en"} {
				u := newUnit(t)
				u.approvals.err = tt.err
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
		if got := text(u.send(t, "/code guide", "en")); !strings.Contains(got, "refused by policy (it will not run): hard_deny:.git") {
			t.Fatalf("reply %q", got)
		}
		if len(u.executor.executed()) != 0 {
			t.Fatal("refused job executed")
		}
	})
	t.Run("approve without a grant does not execute", func(t *testing.T) {
		u := newUnit(t)
		u.approvals.decided = app.ApprovalJob{Status: "expired"}
		if got := text(u.send(t, "/approve job_20260101_009", "")); !strings.Contains(got, "（expired）") {
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
		err    error
		ja, en string
	}{
		{peerErr(domain.ErrUnavailable, "refused"), "承認サービスに接続できないため、Auto-Approve", "The approval service is unreachable, so Auto-Approve"},
		{peerErr(domain.ErrForbidden, "not an approver"), "Auto-Approve を変更する権限がありません", "You may not change Auto-Approve"},
		{peerErr(domain.ErrInvalid, "ttl too long"), "使い方: /auto-approve", "ttl too long"},
		{peerErr(domain.ErrConflict, "auto-approve is disabled"), "Auto-Approve は変更できませんでした: auto-approve is disabled", "Auto-Approve could not be changed: auto-approve is disabled"},
		{peerErr(nil, "internal"), "approval でエラーが起きました", "approval reported an error"},
	}
	for _, tt := range tests {
		for _, loc := range []string{"ja", "en"} {
			u := newUnit(t)
			u.approvals.err = tt.err
			got := text(u.send(t, "/auto-approve on paths=docs/", loc))
			if want := map[string]string{"ja": tt.ja, "en": tt.en}[loc]; !strings.Contains(got, want) {
				t.Errorf("%v %s: %q lacks %q", tt.err, loc, got, want)
			}
		}
	}
}

func TestExecutorErrors(t *testing.T) {
	tests := []struct {
		err  error
		want string
	}{
		{&domain.PeerError{Peer: "executor", Kind: domain.ErrUnavailable, Message: "dial"}, "実行サービス（executor）に接続できなかったため"},
		{&domain.PeerError{Peer: "executor", Kind: domain.ErrConflict, Message: "job was already claimed"}, "の実行に失敗しました: job was already claimed"},
		{&domain.PeerError{Peer: "executor", Message: "secret path /srv/x"}, "内部エラー"},
	}
	for _, tt := range tests {
		u := newUnit(t)
		u.approvals.decided = app.ApprovalJob{Status: app.StatusGranted}
		u.executor.err = tt.err
		got := text(u.send(t, "/approve job_20260101_009", ""))
		if !strings.Contains(got, tt.want) || strings.Contains(got, "/srv/x") {
			t.Errorf("%v: %q", tt.err, got)
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
