package cli

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"strings"
	"testing"
	"time"

	"connectrpc.com/connect"
	"github.com/jackc/pgx/v5"
	"google.golang.org/genproto/googleapis/rpc/errdetails"

	approvalv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/approval/v1"
	"github.com/picoclaw-suite/picoclaw/gen/picoclaw/approval/v1/approvalv1connect"
	commonv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/common/v1"
	"github.com/picoclaw-suite/picoclaw/pkg/config"
	"github.com/picoclaw-suite/picoclaw/pkg/testinfra"
	"github.com/picoclaw-suite/picoclaw/services/approval/approvaltest"
	approval "github.com/picoclaw-suite/picoclaw/services/approval/service"
)

const auditTestKey = "audit-verify-test-key-0123456789abcdef"

// auditSuite is approval running on Postgres as deployed: migrated by the owner, serving as a
// role of its own, with an audit key.
type auditSuite struct {
	client   approvalv1connect.ApprovalServiceClient
	ownerDSN string
	env      map[string]string
}

func startAuditSuite(t *testing.T) auditSuite {
	t.Helper()
	pg := testinfra.Postgres(t)
	_, runtimeDSN := testinfra.PostgresRole(t, pg)
	rd := testinfra.Redis(t)
	s := approvaltest.Start(t, approvaltest.WithApprovers("line", "Uowner"), approvaltest.WithConfig(func(cfg *approval.Config) {
		cfg.Redis.Addr, cfg.Redis.KeyPrefix = rd.Addr, rd.Prefix
		cfg.Approval.Store = approval.StorePostgres
		cfg.Postgres.DSN, cfg.Postgres.MigrateDSN = config.Secret(runtimeDSN), config.Secret(pg.DSN)
		cfg.Approval.Audit.Key = auditTestKey
		cfg.Approval.Audit.VerifyInterval = 0
	}))
	// The CLI reads the database with the service's own (read-only enough) role and the key.
	return auditSuite{client: s.Client, ownerDSN: pg.DSN,
		env: map[string]string{"PICOCLAW_POSTGRES_DSN": runtimeDSN, "PICOCLAW_AUDIT_KEY": auditTestKey}}
}

var owner = &commonv1.Actor{Id: "Uowner", Channel: "line"}

// job requests a docs change; decide approves it, runs it through claim and report, or denies it.
func (s auditSuite) job(t *testing.T, id string, decide string) {
	t.Helper()
	ctx := context.Background()
	if _, err := s.client.RequestApproval(ctx, &approvalv1.RequestApprovalRequest{Proposal: &commonv1.Proposal{JobId: id, Plan: "docs",
		Patch: `[{"type":"file_edit","action":"update","target":"docs/a.md","content":"hello\n"}]`}}); err != nil {
		t.Fatal(err)
	}
	var err error
	switch decide {
	case "deny":
		_, err = s.client.Deny(ctx, &approvalv1.DenyRequest{JobId: id, Actor: owner, Reason: "no"})
	case "approve":
		_, err = s.client.Approve(ctx, &approvalv1.ApproveRequest{JobId: id, Actor: owner})
	case "complete":
		if _, err = s.client.Approve(ctx, &approvalv1.ApproveRequest{JobId: id, Actor: owner}); err == nil {
			var claim *approvalv1.ClaimJobResponse
			if claim, err = s.client.ClaimJob(ctx, &approvalv1.ClaimJobRequest{JobId: id, ExecutorId: "ex1"}); err == nil {
				_, err = s.client.ReportExecution(ctx, &approvalv1.ReportExecutionRequest{JobId: id, ExecutorId: "ex1",
					LeaseToken: claim.GetLeaseToken(), Event: approvalv1.ExecutionEvent_EXECUTION_EVENT_COMPLETED})
			}
		}
	}
	if err != nil {
		t.Fatalf("%s %s: %v", decide, id, err)
	}
}

// ownerConn connects as the database owner until the test ends.
func (s auditSuite) ownerConn(t *testing.T) *pgx.Conn {
	t.Helper()
	conn, err := pgx.Connect(context.Background(), s.ownerDSN)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close(context.Background()) })
	return conn
}

// tamper runs sql as the database owner would, with the append-only triggers out of the way.
func (s auditSuite) tamper(t *testing.T, stmts ...string) {
	t.Helper()
	ctx := context.Background()
	conn := s.ownerConn(t)
	if err := pgx.BeginFunc(ctx, conn, func(tx pgx.Tx) error {
		if _, err := tx.Exec(ctx, `SET LOCAL session_replication_role = replica`); err != nil {
			return err
		}
		for _, q := range stmts {
			if _, err := tx.Exec(ctx, q); err != nil {
				return errors.Join(errors.New(q), err)
			}
		}
		return nil
	}); err != nil {
		t.Fatalf("tamper: %v", err)
	}
}

// recompute rewrites a job's chain from seq `from` the way someone without the key would: the
// plain sha256 of each event's encoding, linked by prev_hash, and the row's anchor to match.
func (s auditSuite) recompute(t *testing.T, id string, from int) {
	t.Helper()
	ctx := context.Background()
	conn := s.ownerConn(t)
	rows, err := conn.Query(ctx, `SELECT seq, type, actor_id, actor_channel, actor_name, channel, payload::text, policy_rule,
		prev_hash, hash, key_id, created_at FROM approval_events WHERE job_id = $1 ORDER BY seq`, id)
	if err != nil {
		t.Fatal(err)
	}
	type ev struct {
		seq                                                                    int64
		typ, actorID, actorCh, actorName, channel, payload, rule, prev, h, kid string
		at                                                                     time.Time
	}
	var evs []ev
	for rows.Next() {
		var e ev
		if err := rows.Scan(&e.seq, &e.typ, &e.actorID, &e.actorCh, &e.actorName, &e.channel, &e.payload, &e.rule, &e.prev, &e.h, &e.kid, &e.at); err != nil {
			t.Fatal(err)
		}
		evs = append(evs, e)
	}
	if rows.Err() != nil {
		t.Fatal(rows.Err())
	}
	var stmts []string
	prev := ""
	for i, e := range evs {
		if i+1 >= from {
			e.prev = prev
			b, _ := json.Marshal([]any{"picoclaw.audit.v2", e.kid, id, e.seq, e.typ, e.actorID, e.actorCh, e.actorName, e.channel,
				e.payload, e.rule, e.at.UTC().Format(time.RFC3339Nano), e.prev})
			sum := sha256.Sum256(b)
			e.h = hex.EncodeToString(sum[:])
			stmts = append(stmts, "UPDATE approval_events SET actor_id = "+quote(e.actorID)+", prev_hash = "+quote(e.prev)+
				", hash = "+quote(e.h)+" WHERE job_id = "+quote(id)+" AND seq = "+itoa(e.seq))
		}
		prev = e.h
	}
	stmts = append(stmts, "UPDATE approval_jobs SET last_hash = "+quote(prev)+" WHERE job_id = "+quote(id))
	s.tamper(t, stmts...)
}

func quote(s string) string { return "'" + strings.ReplaceAll(s, "'", "''") + "'" }
func itoa(n int64) string   { b, _ := json.Marshal(n); return string(b) }

// verify runs `picoclaw audit verify args...` in-process, in English, and returns the exit code
// and output.
func (s auditSuite) verify(t *testing.T, args ...string) (int, string) {
	t.Helper()
	return s.verifyIn(t, "en", args...)
}

// verifyIn is verify in locale.
func (s auditSuite) verifyIn(t *testing.T, locale string, args ...string) (int, string) {
	t.Helper()
	var out, errOut bytes.Buffer
	code := Main(append([]string{"--locale", locale, "audit", "verify"}, args...), IO{In: strings.NewReader(""), Out: &out, Err: &errOut,
		Getenv: func(k string) string { return s.env[k] }})
	return code, out.String() + errOut.String()
}

// TestAuditVerifyDetectsTampering tampers with a Postgres audit log in every way the owner of
// the database could, and `picoclaw audit verify` names each one and exits with ExitTampered.
func TestAuditVerifyDetectsTampering(t *testing.T) {
	s := startAuditSuite(t)
	cases := []struct {
		id, decide string
		tamper     func(t *testing.T, id string)
		want       string
	}{
		{"job_20260301_001", "complete", func(t *testing.T, id string) {
			s.tamper(t, `UPDATE approval_events SET payload = '{"executor_id":"ex1","result":{"success":false}}' WHERE job_id = '`+id+`' AND seq = 4`)
		}, "edited"},
		{"job_20260301_002", "complete", func(t *testing.T, id string) {
			s.tamper(t, `UPDATE approval_events SET actor_id = 'Umallory' WHERE job_id = '`+id+`' AND seq = 2`)
			s.recompute(t, id, 2)
		}, "recomputed"},
		{"job_20260301_003", "complete", func(t *testing.T, id string) {
			s.tamper(t, `DELETE FROM approval_events WHERE job_id = '`+id+`' AND seq = 4`)
		}, "missing_last_events"},
		{"job_20260301_004", "complete", func(t *testing.T, id string) {
			s.tamper(t, `DELETE FROM approval_events WHERE job_id = '`+id+`' AND seq = 2`)
		}, "missing_events"},
		{"job_20260301_005", "complete", func(t *testing.T, id string) {
			s.tamper(t, `UPDATE approval_events SET seq = 100 WHERE job_id = '`+id+`' AND seq = 2`,
				`UPDATE approval_events SET seq = 2 WHERE job_id = '`+id+`' AND seq = 3`,
				`UPDATE approval_events SET seq = 3 WHERE job_id = '`+id+`' AND seq = 100`)
		}, "reordered"},
		{"job_20260301_006", "deny", func(t *testing.T, id string) {
			s.tamper(t, `UPDATE approval_jobs SET status = 'granted', approver = 'Umallory' WHERE job_id = '`+id+`'`)
		}, "read_model_mismatch"},
		{"job_20260301_007", "approve", func(t *testing.T, id string) {
			s.tamper(t, `UPDATE approval_jobs SET last_hash = 'x' WHERE job_id = '`+id+`'`)
		}, "anchor_mismatch"},
		{"job_20260301_008", "approve", func(t *testing.T, id string) {
			s.tamper(t, `UPDATE approval_jobs SET content_hash = 'x' WHERE job_id = '`+id+`'`)
		}, "read_model_mismatch"},
	}
	for _, c := range cases {
		s.job(t, c.id, c.decide)
	}
	s.job(t, "job_20260301_009", "complete") // stays intact
	if code, out := s.verify(t); code != ExitOK || !strings.Contains(out, "0 findings") {
		t.Fatalf("untouched log: exit %d\n%s", code, out)
	}
	if code, out := s.verifyIn(t, "ja"); code != ExitOK || !strings.Contains(out, "件を検証、問題 0 件") {
		t.Fatalf("untouched log, in Japanese: exit %d\n%s", code, out)
	}
	for _, c := range cases {
		c.tamper(t, c.id)
		code, out := s.verify(t, "--job", c.id)
		if code != ExitTampered || !strings.Contains(out, c.id) || !strings.Contains(out, ": "+c.want+":") {
			t.Errorf("%s tampered (%s): exit %d, want %d naming it\n%s", c.id, c.want, code, ExitTampered, out)
		}
	}
	code, out := s.verify(t)
	if code != ExitTampered || strings.Contains(out, "job_20260301_009") {
		t.Errorf("whole log: exit %d\n%s", code, out)
	}
	for _, c := range cases {
		if !strings.Contains(out, c.id) {
			t.Errorf("whole log: %s not reported\n%s", c.id, out)
		}
	}
	if code, out := s.verify(t, "--job", "job_20260301_999"); code != ExitNotFound {
		t.Errorf("unknown job: exit %d\n%s", code, out)
	}
	if code, out := s.verify(t, "--job", "job_20260301_009"); code != ExitOK {
		t.Errorf("intact job: exit %d\n%s", code, out)
	}

	// The claim is checked against the log: a denied job whose row was made to read "granted"
	// is refused with a stable data-loss error, and nothing is recorded on the tampered log.
	_, err := s.client.ClaimJob(context.Background(), &approvalv1.ClaimJobRequest{JobId: "job_20260301_006", ExecutorId: "ex1"})
	if connect.CodeOf(err) != connect.CodeDataLoss || reason(err) != "AUDIT_TAMPERED" {
		t.Fatalf("claim of a tampered job: %v (reason %q), want DataLoss AUDIT_TAMPERED", err, reason(err))
	}
	_, err = s.client.Approve(context.Background(), &approvalv1.ApproveRequest{JobId: "job_20260301_004", Actor: owner})
	if connect.CodeOf(err) != connect.CodeDataLoss {
		t.Errorf("decision on a tampered job: %v, want DataLoss", err)
	}
}

func reason(err error) string {
	var ce *connect.Error
	if !errors.As(err, &ce) {
		return ""
	}
	for _, d := range ce.Details() {
		if v, err := d.Value(); err == nil {
			if info, ok := v.(*errdetails.ErrorInfo); ok {
				return info.GetReason()
			}
		}
	}
	return ""
}
