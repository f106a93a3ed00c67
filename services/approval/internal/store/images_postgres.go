//go:build !sqliteonly

package store

import (
	"context"

	"github.com/picoclaw-suite/picoclaw/services/approval/internal/app"
	"github.com/picoclaw-suite/picoclaw/services/approval/internal/domain"
)

var _ app.ImageLog = (*Postgres)(nil)

// AppendImage writes one image record (the runtime role may insert and read, nothing else).
func (s *Postgres) AppendImage(ctx context.Context, r domain.ImageRecord) (domain.ImageRecord, error) {
	err := s.pool.QueryRow(ctx, `INSERT INTO approval_images (job_id, session_id, sha256, size_bytes, mime_type, provider, model, kept, recorded_at)
		VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING id, recorded_at`,
		r.JobID, r.SessionID, r.SHA256, r.Size, r.MIMEType, r.Provider, r.Model, r.Kept, r.At).Scan(&r.ID, &r.At)
	r.At = r.At.UTC()
	return r, Unavailable(err)
}

// ListImages returns image records, newest first.
func (s *Postgres) ListImages(ctx context.Context, f domain.ImageFilter) ([]domain.ImageRecord, error) {
	q := `SELECT id, job_id, session_id, sha256, size_bytes, mime_type, provider, model, kept, recorded_at FROM approval_images
		WHERE ($1 = '' OR job_id = $1) AND ($2::timestamptz IS NULL OR recorded_at >= $2) ORDER BY id DESC LIMIT $3`
	var since any
	if !f.Since.IsZero() {
		since = f.Since
	}
	rows, err := s.pool.Query(ctx, q, f.JobID, since, limitOf(f))
	if err != nil {
		return nil, Unavailable(err)
	}
	out, err := pgCollect(rows, func(r pgScanner) (domain.ImageRecord, error) {
		var x domain.ImageRecord
		err := r.Scan(&x.ID, &x.JobID, &x.SessionID, &x.SHA256, &x.Size, &x.MIMEType, &x.Provider, &x.Model, &x.Kept, &x.At)
		x.At = x.At.UTC()
		return x, err
	})
	return out, Unavailable(err)
}

// ImageJobIDsOfDay lists the job ids of the day's image records.
func (s *Postgres) ImageJobIDsOfDay(ctx context.Context, day string) ([]string, error) {
	rows, err := s.pool.Query(ctx, `SELECT DISTINCT job_id FROM approval_images WHERE job_id LIKE $1`, "job_"+day+"_%")
	if err != nil {
		return nil, Unavailable(err)
	}
	ids, err := pgCollect(rows, pgString)
	return ids, Unavailable(err)
}
