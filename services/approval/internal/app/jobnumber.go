package app

import (
	"context"
	"fmt"
	"regexp"
	"strconv"
	"strings"

	"github.com/picoclaw-suite/picoclaw/services/approval/internal/domain"
)

var dayRE = regexp.MustCompile(`^[0-9]{8}$`)

// maxCounterDigits tells a counter id (job_YYYYMMDD_007, up to seven digits) from the fallback
// form (job_YYYYMMDD_<8 hex>), which is random and never a floor.
const maxCounterDigits = 7

// HighestJobNumber is the highest NNN of the day's job_YYYYMMDD_NNN ids in the audit store (the
// jobs and the image audit log), 0
// when there is none: a JobID counter that lost its state starts above it.
func (s *Service) HighestJobNumber(ctx context.Context, day string) (int64, error) {
	if !dayRE.MatchString(day) {
		return 0, fmt.Errorf("%w: day must be YYYYMMDD, got %q", domain.ErrInvalid, day)
	}
	ids, err := s.store.JobIDsOfDay(ctx, day)
	if err != nil {
		return 0, err
	}
	// An image turn's JobID is in the image audit log, not among the jobs.
	if s.images != nil {
		more, err := s.images.ImageJobIDsOfDay(ctx, day)
		if err != nil {
			return 0, err
		}
		ids = append(ids, more...)
	}
	var highest int64
	for _, id := range ids {
		n := strings.TrimPrefix(id, "job_"+day+"_")
		if len(n) == 0 || len(n) > maxCounterDigits {
			continue
		}
		v, err := strconv.ParseInt(n, 10, 64)
		if err == nil && v > highest {
			highest = v
		}
	}
	return highest, nil
}
