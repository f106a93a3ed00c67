//go:build !serveronly

package store

import (
	"context"
	"time"

	"github.com/picoclaw-suite/picoclaw/services/approval/internal/domain"
)

// Requester notices on SQLite; notices_postgres.go holds the same on Postgres.

func (u sqliteUpdate) insertNotice(ctx context.Context, n domain.Notice) error {
	_, err := u.tx.ExecContext(ctx, `INSERT INTO approval_notices (job_id, session_id, status, trace_parent, created_at, next_at)
		VALUES (?, ?, ?, ?, ?, ?) ON CONFLICT (job_id) DO NOTHING`, n.JobID, n.SessionID, string(n.Status), n.TraceParent,
		n.At.UnixMicro(), n.At.UnixMicro())
	return err
}

// DueNotices returns the notices not yet done whose next attempt is due at now, oldest first.
func (s *SQLite) DueNotices(ctx context.Context, now time.Time, limit int) ([]domain.Notice, error) {
	rows, err := s.db.QueryContext(ctx, `SELECT job_id, session_id, status, trace_parent, created_at, attempts FROM approval_notices
		WHERE done_at IS NULL AND next_at <= ? ORDER BY next_at, job_id LIMIT ?`, now.UnixMicro(), limit)
	if err != nil {
		return nil, err
	}
	defer rows.Close()
	var out []domain.Notice
	for rows.Next() {
		var (
			n      domain.Notice
			status string
			at     int64
		)
		if err := rows.Scan(&n.JobID, &n.SessionID, &status, &n.TraceParent, &at, &n.Attempts); err != nil {
			return nil, err
		}
		n.Status, n.At = domain.Status(status), time.UnixMicro(at).UTC()
		out = append(out, n)
	}
	return out, rows.Err()
}

// ClaimNotice: see Postgres.ClaimNotice.
func (s *SQLite) ClaimNotice(ctx context.Context, jobID string, now, retryAt time.Time) (bool, error) {
	res, err := s.db.ExecContext(ctx, `UPDATE approval_notices SET attempts = attempts + 1, next_at = ?
		WHERE job_id = ? AND done_at IS NULL AND next_at <= ?`, retryAt.UnixMicro(), jobID, now.UnixMicro())
	if err != nil {
		return false, err
	}
	n, err := res.RowsAffected()
	return n == 1, err
}

// NoticeDone: see Postgres.NoticeDone.
func (s *SQLite) NoticeDone(ctx context.Context, jobID string, at time.Time, outcome string) error {
	_, err := s.db.ExecContext(ctx, `UPDATE approval_notices SET done_at = ?, outcome = ? WHERE job_id = ? AND done_at IS NULL`,
		at.UnixMicro(), outcome, jobID)
	return err
}
