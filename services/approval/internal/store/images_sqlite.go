//go:build !serveronly

package store

import (
	"context"
	"time"

	"github.com/picoclaw-suite/picoclaw/services/approval/internal/app"
	"github.com/picoclaw-suite/picoclaw/services/approval/internal/domain"
)

// The image audit log on SQLite; images_postgres.go holds the same on Postgres.

var _ app.ImageLog = (*SQLite)(nil)

// AppendImage writes one image record.
func (s *SQLite) AppendImage(ctx context.Context, r domain.ImageRecord) (domain.ImageRecord, error) {
	res, err := s.db.ExecContext(ctx, `INSERT INTO approval_images (job_id, session_id, sha256, size_bytes, mime_type, provider, model, kept, recorded_at)
		VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)`, r.JobID, r.SessionID, r.SHA256, r.Size, r.MIMEType, r.Provider, r.Model, r.Kept, r.At.UnixMicro())
	if err != nil {
		return r, Unavailable(err)
	}
	if r.ID, err = res.LastInsertId(); err != nil {
		return r, err
	}
	r.At = time.UnixMicro(r.At.UnixMicro()).UTC()
	return r, nil
}

// ListImages returns image records, newest first.
func (s *SQLite) ListImages(ctx context.Context, f domain.ImageFilter) ([]domain.ImageRecord, error) {
	q := `SELECT id, job_id, session_id, sha256, size_bytes, mime_type, provider, model, kept, recorded_at FROM approval_images WHERE 1=1`
	var args []any
	if f.JobID != "" {
		q += ` AND job_id = ?`
		args = append(args, f.JobID)
	}
	if !f.Since.IsZero() {
		q += ` AND recorded_at >= ?`
		args = append(args, f.Since.UnixMicro())
	}
	q += ` ORDER BY id DESC LIMIT ?`
	args = append(args, limitOf(f))
	rows, err := s.db.QueryContext(ctx, q, args...)
	if err != nil {
		return nil, Unavailable(err)
	}
	defer rows.Close()
	var out []domain.ImageRecord
	for rows.Next() {
		var (
			r  domain.ImageRecord
			at int64
		)
		if err := rows.Scan(&r.ID, &r.JobID, &r.SessionID, &r.SHA256, &r.Size, &r.MIMEType, &r.Provider, &r.Model, &r.Kept, &at); err != nil {
			return nil, err
		}
		r.At = time.UnixMicro(at).UTC()
		out = append(out, r)
	}
	return out, Unavailable(rows.Err())
}

// ImageJobIDsOfDay lists the job ids of the day's image records.
func (s *SQLite) ImageJobIDsOfDay(ctx context.Context, day string) ([]string, error) {
	ids, err := s.strings(ctx, `SELECT DISTINCT job_id FROM approval_images WHERE job_id LIKE ?`, "job_"+day+"_%")
	return ids, Unavailable(err)
}
