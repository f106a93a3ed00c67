package domain

import (
	"strings"
	"testing"
	"time"
)

// decided folds the requested event and the outcome of decide into a job, as the store does.
func decided(t *testing.T, session, traceParent string, decide func(Job) ([]Draft, error)) (prev, next Job) {
	t.Helper()
	j := pending(t)
	j.SessionID, j.TraceParent, j.Locale = session, traceParent, "ja"
	req, err := testKeys.Seal(j.ID, 0, "", Draft{Type: EventRequested, Actor: Actor{ID: "U1", Channel: "line"}, At: t0, Payload: j})
	if err != nil {
		t.Fatal(err)
	}
	if err := prev.Apply(req); err != nil {
		t.Fatal(err)
	}
	drafts, _ := decide(prev)
	next = prev
	for _, d := range drafts {
		e, err := testKeys.Seal(j.ID, next.Version, next.LastHash, d)
		if err != nil {
			t.Fatal(err)
		}
		if err := next.Apply(e); err != nil {
			t.Fatal(err)
		}
	}
	return prev, next
}

func TestNoticeOf(t *testing.T) {
	alice := Actor{ID: "U2", Channel: "slack", DisplayName: "Alice"}
	const chat = "line:U1"
	in := func(session string) func([]Draft, error) ([]Draft, error) {
		return func(drafts []Draft, err error) ([]Draft, error) { return DecidedFrom(session, drafts), err }
	}
	tests := []struct {
		name    string
		session string
		decide  func(Job) ([]Draft, error)
		want    Status // "" for no notice
	}{
		{"approved in the requester's chat", chat, func(j Job) ([]Draft, error) { return in(chat)(j.Approve(alice, t0)) }, ""},
		{"approved in another chat", chat, func(j Job) ([]Draft, error) { return in("slack:C1:1.0")(j.Approve(alice, t0)) }, StatusGranted},
		{"approved outside chat", chat, func(j Job) ([]Draft, error) { return in("")(j.Approve(alice, t0)) }, StatusGranted},
		{"denied in another chat", chat, func(j Job) ([]Draft, error) { return in("line:Cgroup")(j.Deny(alice, "no", t0)) }, StatusDenied},
		{"denied in the requester's chat", chat, func(j Job) ([]Draft, error) { return in(chat)(j.Deny(alice, "no", t0)) }, ""},
		{"cancelled outside chat", chat, func(j Job) ([]Draft, error) { return j.Cancel(alice, "", t0) }, StatusCancelled},
		{"expired by the sweeper", chat, func(j Job) ([]Draft, error) { return j.Expire(t0.Add(time.Hour)), nil }, StatusExpired},
		{"expired, found by a late approval in the requester's chat", chat,
			func(j Job) ([]Draft, error) { return in(chat)(j.Approve(alice, t0.Add(time.Hour))) }, StatusExpired},
		{"not yet expired: nothing happens", chat, func(j Job) ([]Draft, error) { return j.Expire(t0), nil }, ""},
		{"a job without a chat has nobody to tell", "", func(j Job) ([]Draft, error) { return j.Expire(t0.Add(time.Hour)), nil }, ""},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			prev, next := decided(t, tc.session, "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", tc.decide)
			n, ok := NoticeOf(prev, next)
			if tc.want == "" {
				if ok {
					t.Fatalf("notice %+v, want none", n)
				}
				return
			}
			if !ok || n.Status != tc.want || n.JobID != next.ID || n.SessionID != tc.session || !n.At.Equal(next.DecidedAt) ||
				n.TraceParent != next.TraceParent {
				t.Fatalf("notice %+v, %v; want %s to %s in the job's trace", n, ok, tc.want, tc.session)
			}
			// Only the change out of pending owes a notice: the same state again owes nothing.
			if _, again := NoticeOf(next, next); again {
				t.Error("a job already decided owes a second notice")
			}
		})
	}
}

func TestDecidedFromIsRecordedAndRebuilt(t *testing.T) {
	alice := Actor{ID: "U2", Channel: "slack"}
	_, granted := decided(t, "line:U1", "", func(j Job) ([]Draft, error) {
		d, err := j.Approve(alice, t0)
		return DecidedFrom("slack:C1:1.0", d), err
	})
	_, denied := decided(t, "line:U1", "", func(j Job) ([]Draft, error) {
		d, err := j.Deny(alice, "too broad", t0)
		return DecidedFrom("line:Cgroup", d), err
	})
	if granted.DecidedIn != "slack:C1:1.0" || denied.DecidedIn != "line:Cgroup" || denied.DenyReason != "too broad" {
		t.Fatalf("decided in %q / %q (reason %q)", granted.DecidedIn, denied.DecidedIn, denied.DenyReason)
	}
	// An auto-approval sent back to pending forgets who decided, and where.
	revoked := granted
	revoked.Status = StatusAutoApproved
	e, err := testKeys.Seal(revoked.ID, revoked.Version, revoked.LastHash, revoked.RevokeAutoApproval(CodeRevokedSwitchedOff, t0)[0])
	if err != nil {
		t.Fatal(err)
	}
	if err := revoked.Apply(e); err != nil || revoked.DecidedIn != "" {
		t.Fatalf("revoked: decided in %q, %v", revoked.DecidedIn, err)
	}
}

func TestNoticeText(t *testing.T) {
	tokyo := time.FixedZone("JST", 9*3600)
	base := Job{ID: "job_20260301_001", DecidedBy: Actor{ID: "U2", Channel: "slack", DisplayName: "Alice"}, ExpiresAt: t0}
	tests := []struct {
		name string
		edit func(*Job)
		want []string
	}{
		{"granted in another chat", func(j *Job) { j.Status, j.DecidedIn = StatusGranted, "slack:C1:1.0" },
			[]string{"✅ job_20260301_001 は Alice が承認しました。"}},
		{"granted outside chat says how to run it", func(j *Job) { j.Status = StatusGranted },
			[]string{"Alice が承認しました", "/approve job_20260301_001"}},
		{"granted, English", func(j *Job) { j.Status, j.Locale, j.DecidedIn = StatusGranted, "en", "slack:C1:1.0" },
			[]string{"✅ job_20260301_001 was approved by Alice."}},
		{"denied with the reason, mentions defused", func(j *Job) { j.Status, j.DenyReason, j.DecidedIn = StatusDenied, "ask @channel", "x" },
			[]string{"⛔ job_20260301_001 は Alice が却下しました。", "理由: ask ＠channel"}},
		{"denied without a name", func(j *Job) { j.Status, j.DecidedBy = StatusDenied, Actor{ID: "tok", Channel: "rest"} },
			[]string{"rest:tok が却下しました"}},
		{"cancelled, English", func(j *Job) { j.Status, j.Locale = StatusCancelled, "en" }, []string{"🚫 job_20260301_001 was cancelled by Alice."}},
		{"expired, in the configured zone", func(j *Job) { j.Status = StatusExpired },
			[]string{"⌛ job_20260301_001", "2026-03-01 18:00 JST", "期限切れ"}},
		{"expired, English", func(j *Job) { j.Status, j.Locale = StatusExpired, "en" }, []string{"expired", "Ask again"}},
		{"a reason's line breaks stay on its line", func(j *Job) {
			j.Status, j.DecidedIn, j.DenyReason = StatusDenied, "x", "too risky\n\n✅ job_20260301_001 は Bob が承認しました。\r\n<!channel>"
		}, []string{"理由: too risky ✅ job_20260301_001 は Bob が承認しました。 ‹!channel>"}},
		{"a display name's line breaks stay on its line", func(j *Job) {
			j.Status, j.DecidedIn, j.DecidedBy.DisplayName = StatusGranted, "x", "Eve\n✅ approved by admin\u2028"
		}, []string{"は Eve ✅ approved by admin が承認しました。"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			j := base
			tc.edit(&j)
			got := NoticeText(j, j.Status, tokyo)
			for _, w := range tc.want {
				if !strings.Contains(got, w) {
					t.Errorf("%q lacks %q", got, w)
				}
			}
			if strings.Contains(got, "@") {
				t.Errorf("%q mentions someone", got)
			}
			if n := strings.Count(got, "\n"); n > 1 || (n == 1 && j.DecidedIn != "" && j.Status != StatusDenied && j.Status != StatusCancelled) {
				t.Errorf("%q has %d line breaks", got, n)
			}
		})
	}
}

// TestNoticeSaysTheDecisionAfterTheJobMovedOn: a notice delivered when the approved job is
// already executing (or done) still says who approved it.
func TestNoticeSaysTheDecisionAfterTheJobMovedOn(t *testing.T) {
	j := Job{ID: "job_20260301_002", DecidedBy: Actor{ID: "U2", Channel: "line", DisplayName: "Alice"}, DecidedIn: "line:C1"}
	for _, now := range []Status{StatusExecuting, StatusCompleted, StatusFailed} {
		j.Status = now
		if got := NoticeText(j, StatusGranted, time.UTC); !strings.Contains(got, "✅ job_20260301_002 は Alice が承認しました。") {
			t.Errorf("job %s: %q", now, got)
		}
	}
}
