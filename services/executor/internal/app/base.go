package app

import (
	"fmt"
	"sort"

	"github.com/picoclaw-suite/picoclaw/pkg/patch"
	"github.com/picoclaw-suite/picoclaw/services/executor/internal/domain"
	"github.com/picoclaw-suite/picoclaw/services/executor/internal/workspace"
)

// ErrStaleBase marks a job whose files changed since the proposal was written.
var ErrStaleBase = fmt.Errorf("%w: the workspace changed since the proposal", domain.ErrConflict)

// checkBase compares every base the patch carries (patch.MetaBaseSHA256) with the workspace
// before anything is written: a file edited since the proposal — even far from the hunk —
// stops the whole job. It names the first changed file and the next step.
func (r *Runner) checkBase(jobID string, p *patch.Patch, l domain.Locale) error {
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
		return fmt.Errorf("%w: %s", ErrStaleBase, staleText(l, clean, want, now, exists, jobID))
	}
	return nil
}

// staleText tells, in the user's language, which file changed since the proposal, that
// nothing was written, and what to do next.
func staleText(l domain.Locale, path, want, now string, exists bool, jobID string) string {
	if l == domain.LocaleEN {
		what := "was changed"
		switch {
		case want == patch.BaseAbsent:
			what = "was created"
		case !exists:
			what = "was deleted"
		}
		next := "ask for a new proposal"
		if jobID != "" {
			next = "send /retry " + jobID + " to ask the same order again with the current content"
		}
		return fmt.Sprintf("%s %s after the proposal was written (proposal base %s, now %s); nothing was written — %s",
			path, what, short(want), short(now), next)
	}
	what := "変更されました"
	switch {
	case want == patch.BaseAbsent:
		what = "作成されました"
	case !exists:
		what = "削除されました"
	}
	next := "もう一度依頼してください"
	if jobID != "" {
		next = "/retry " + jobID + " で同じオーダーに今の内容で依頼し直せます"
	}
	return fmt.Sprintf("%s は提案が書かれた後に%s（提案時 %s、今 %s）。何も書き込んでいません。%s",
		path, what, short(want), short(now), next)
}
