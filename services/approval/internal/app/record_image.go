package app

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"log/slog"

	"github.com/picoclaw-suite/picoclaw/services/approval/internal/domain"
)

// ImageLog is the image audit log (append-only), implemented by the stores.
type ImageLog interface {
	// AppendImage writes one record and returns it with its id.
	AppendImage(ctx context.Context, r domain.ImageRecord) (domain.ImageRecord, error)
	// ListImages returns records, newest first.
	ListImages(ctx context.Context, f domain.ImageFilter) ([]domain.ImageRecord, error)
	// ImageJobIDsOfDay lists the job ids of the day's image records (job_<day>_…): those
	// JobIDs reached the audit store too and are never handed out again.
	ImageJobIDsOfDay(ctx context.Context, day string) ([]string, error)
}

// ImageKeeper stores the bytes of recorded images (images.keep); it reports false when it
// did not keep them (its bound is reached).
type ImageKeeper interface {
	Keep(ctx context.Context, sha string, mime string, data []byte) (bool, error)
}

// WithImages gives the service the image audit log and, when images.keep is on, the keeper.
func WithImages(log ImageLog, keep ImageKeeper) Option {
	return func(s *Service) { s.images, s.keeper = log, keep }
}

// ImageInput is one picture about to be sent to a model.
type ImageInput struct {
	JobID, SessionID string
	Data             []byte
	MIMEType         string
	Provider, Model  string
}

// RecordImage writes the image's audit record; the caller sends the image only when this
// succeeds. The hash and size are computed here, not taken from the caller. Keeping the bytes
// is best effort: a record whose bytes could not be kept says so.
func (s *Service) RecordImage(ctx context.Context, in ImageInput) (domain.ImageRecord, error) {
	if s.images == nil {
		return domain.ImageRecord{}, fmt.Errorf("%w: no image audit log", domain.ErrUnavailable)
	}
	id, err := normalizeID(in.JobID)
	if err != nil {
		return domain.ImageRecord{}, err
	}
	sum := sha256.Sum256(in.Data)
	r := domain.ImageRecord{JobID: id, SessionID: in.SessionID, SHA256: hex.EncodeToString(sum[:]), Size: int64(len(in.Data)),
		MIMEType: in.MIMEType, Provider: in.Provider, Model: in.Model, At: s.clock()}
	if err := domain.ValidateImage(r); err != nil {
		return domain.ImageRecord{}, err
	}
	if s.keeper != nil {
		kept, err := s.keeper.Keep(ctx, r.SHA256, r.MIMEType, in.Data)
		if err != nil {
			s.log.WarnContext(ctx, "approval.image_not_kept", slog.String("sha256", r.SHA256), slog.Any("error", err))
		}
		r.Kept = kept && err == nil
	}
	rec, err := s.images.AppendImage(ctx, r)
	if err != nil {
		return domain.ImageRecord{}, fmt.Errorf("record image of %s: %w", id, err)
	}
	s.log.InfoContext(ctx, "approval.image_recorded", slog.String("job_id", id), slog.String("sha256", rec.SHA256),
		slog.Int64("size", rec.Size), slog.String("provider", rec.Provider), slog.String("model", rec.Model), slog.Bool("kept", rec.Kept))
	return rec, nil
}

// ListImages reads the image audit log, newest first.
func (s *Service) ListImages(ctx context.Context, f domain.ImageFilter) ([]domain.ImageRecord, error) {
	if s.images == nil {
		return nil, fmt.Errorf("%w: no image audit log", domain.ErrUnavailable)
	}
	if f.JobID != "" {
		id, err := normalizeID(f.JobID)
		if err != nil {
			return nil, err
		}
		f.JobID = id
	}
	if f.Limit <= 0 || f.Limit > domain.MaxImageList {
		f.Limit = domain.MaxImageList
	}
	return s.images.ListImages(ctx, f)
}
