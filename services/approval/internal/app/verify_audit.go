package app

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/picoclaw-suite/picoclaw/pkg/idlemem"

	"github.com/picoclaw-suite/picoclaw/pkg/jobid"
	"github.com/picoclaw-suite/picoclaw/services/approval/internal/domain"
)

// AuditReader is what verification reads: every stream, and a stream's row and events.
type AuditReader interface {
	// StreamIDs lists every id that has events or a job row, sorted.
	StreamIDs(ctx context.Context) ([]string, error)
	// AuditRead returns a stream's row (nil when it has none) and its events, read together.
	AuditRead(ctx context.Context, id string) (*domain.ReadModel, []domain.Event, error)
}

// AuditReport is the result of one verification.
type AuditReport struct {
	Streams  int              `json:"streams"`
	Events   int              `json:"events"`
	Findings []domain.Finding `json:"findings"`
	// Tampered lists the streams with findings.
	Tampered []string `json:"tampered"`
}

// OK reports whether nothing was found.
func (r AuditReport) OK() bool { return len(r.Findings) == 0 }

// VerifyAudit checks every stream (or only id): each chain under the keyring, and for jobs the
// anchor in the read model and the fields that decide what may run. ErrNotFound when id names
// nothing.
func VerifyAudit(ctx context.Context, r AuditReader, keys *domain.Keyring, id string) (AuditReport, error) {
	var ids []string
	if id != "" {
		n, err := jobid.Normalize(id)
		if err != nil && !strings.HasPrefix(id, "_") {
			return AuditReport{}, fmt.Errorf("%w: %v", domain.ErrInvalid, err)
		}
		if err == nil {
			id = n
		}
		ids = []string{id}
	} else {
		all, err := r.StreamIDs(ctx)
		if err != nil {
			return AuditReport{}, err
		}
		ids = all
	}
	rep := AuditReport{Findings: []domain.Finding{}, Tampered: []string{}}
	for _, sid := range ids {
		if err := ctx.Err(); err != nil {
			return rep, err
		}
		rm, evs, err := r.AuditRead(ctx, sid)
		if err != nil {
			return rep, fmt.Errorf("audit %s: %w", sid, err)
		}
		if rm == nil && len(evs) == 0 {
			if id != "" {
				return rep, fmt.Errorf("audit %s: %w", sid, domain.ErrNotFound)
			}
			continue
		}
		var fs []domain.Finding
		if strings.HasPrefix(sid, "_") {
			// Streams that are not jobs have no read model to anchor them.
			fs = keys.CheckChain(evs)
		} else {
			_, fs = keys.CheckJob(sid, rm, evs, true)
		}
		rep.Streams++
		rep.Events += len(evs)
		if len(fs) > 0 {
			rep.Findings = append(rep.Findings, fs...)
			rep.Tampered = append(rep.Tampered, sid)
		}
	}
	return rep, nil
}

// AuditWatch is the periodic check: it verifies the whole log every interval, logs every finding
// as an error and hands each report to observe (metrics).
func AuditWatch(ctx context.Context, r AuditReader, keys *domain.Keyring, every time.Duration, log *slog.Logger, observe func(AuditReport, error)) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		rep, err := VerifyAudit(ctx, r, keys, "")
		switch {
		case ctx.Err() != nil:
			return
		case err != nil:
			log.WarnContext(ctx, "approval.audit_check_failed", slog.String("error", err.Error()))
		case !rep.OK():
			for _, f := range rep.Findings {
				log.ErrorContext(jobid.WithJobID(ctx, f.Stream), "approval.audit_tampered", slog.String("kind", string(f.Kind)),
					slog.Int64("seq", f.Seq), slog.String("field", f.Field), slog.String("detail", f.Detail))
			}
		}
		observe(rep, err)
		idlemem.Settle()
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
	}
}
