package app

import (
	"fmt"
	"sort"

	"github.com/picoclaw-suite/picoclaw/pkg/fault"
	"github.com/picoclaw-suite/picoclaw/pkg/patch"
	"github.com/picoclaw-suite/picoclaw/services/executor/internal/domain"
	"github.com/picoclaw-suite/picoclaw/services/executor/internal/workspace"
)

// ErrStaleBase marks a job whose files changed since the proposal was written.
var ErrStaleBase = fmt.Errorf("%w: the workspace changed since the proposal", domain.ErrConflict)

// checkBase compares every base the patch carries (patch.MetaBaseSHA256) with the workspace
// before anything is written: a file edited since the proposal — even far from the hunk —
// stops the whole job. It names the first changed file and the next step.
func (r *Runner) checkBase(jobID string, p *patch.Patch) error {
	bases := patch.Bases(p)
	names := make([]string, 0, len(bases))
	for n := range bases {
		names = append(names, n)
	}
	sort.Strings(names)
	disk := r.cfg.Workspace.Disk()
	for _, name := range names {
		want := bases[name]
		clean, err := domain.CleanPath(name)
		if err != nil {
			return err
		}
		data, _, exists, err := disk.Read(clean)
		if err != nil {
			return err
		}
		now := patch.BaseAbsent
		if exists {
			now = workspace.SHA256(data)
		}
		if now == want {
			continue
		}
		return stale(clean, want, now, exists, jobID)
	}
	return nil
}

// stale tells which file changed since the proposal, that nothing was written, and what to
// do next.
func stale(path, want, now string, exists bool, jobID string) error {
	what := domain.TermChanged
	switch {
	case want == patch.BaseAbsent:
		what = domain.TermCreated
	case !exists:
		what = domain.TermDeleted
	}
	if jobID != "" {
		return domain.Fail(ErrStaleBase, domain.CodeStaleRetry, path, fault.Term(what), short(want), short(now), jobID)
	}
	return domain.Fail(ErrStaleBase, domain.CodeStale, path, fault.Term(what), short(want), short(now))
}
