//go:build !sqliteonly

package store

import (
	"context"
	"time"

	"github.com/picoclaw-suite/picoclaw/services/approval/internal/domain"
)

// Requester notices: written by update in the decision's transaction, then claimed, delivered
// and closed by the app's dispatcher (app.Service.DeliverNotices).

func (u pgUpdate) insertNotice(ctx context.Context, n domain.Notice) error {
	_, err := u.tx.Exec(ctx, `INSERT INTO approval_notices (job_id, session_id, status, trace_parent, created_at, next_at)
		VALUES ($1, $2, $3, $4, $5, $5) ON CONFLICT (job_id) DO NOTHING`, n.JobID, n.SessionID, string(n.Status), n.TraceParent, n.At)
	return err
}

// DueNotices returns the notices not yet done whose next attempt is due at now, oldest first.
func (s *Postgres) DueNotices(ctx context.Context, now time.Time, limit int) ([]domain.Notice, error) {
	rows, err := s.pool.Query(ctx, `SELECT job_id, session_id, status, trace_parent, created_at, attempts FROM approval_notices
		WHERE done_at IS NULL AND next_at <= $1 ORDER BY next_at, job_id LIMIT $2`, now, limit)
	if err != nil {
		return nil, err
	}
	return pgCollect(rows, func(r pgScanner) (domain.Notice, error) {
		var n domain.Notice
		var status string
		err := r.Scan(&n.JobID, &n.SessionID, &status, &n.TraceParent, &n.At, &n.Attempts)
		n.Status, n.At = domain.Status(status), n.At.UTC()
		return n, err
	})
}

// ClaimNotice takes a due notice for one attempt: the attempt is counted and the notice is not
// due again before retryAt, so a dispatcher that dies mid-attempt leaves it to the next one. It
// reports false when the notice is done or another dispatcher claimed it first.
func (s *Postgres) ClaimNotice(ctx context.Context, jobID string, now, retryAt time.Time) (bool, error) {
	n, err := s.pool.Exec(ctx, `UPDATE approval_notices SET attempts = attempts + 1, next_at = $3
		WHERE job_id = $1 AND done_at IS NULL AND next_at <= $2`, jobID, now, retryAt)
	if err != nil {
		return false, err
	}
	return n == 1, nil
}

// NoticeDone closes a notice: outcome is "sent" or why it was given up.
func (s *Postgres) NoticeDone(ctx context.Context, jobID string, at time.Time, outcome string) error {
	_, err := s.pool.Exec(ctx, `UPDATE approval_notices SET done_at = $2, outcome = $3 WHERE job_id = $1 AND done_at IS NULL`,
		jobID, at, outcome)
	return err
}
