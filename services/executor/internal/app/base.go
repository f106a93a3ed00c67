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
		return fmt.Errorf("%w: %s", ErrStaleBase, stale(l, clean, want, now, exists, jobID))
	}
	return nil
}

// staleWords are the words of the refusal of a job whose file changed since the proposal.
type staleWords struct {
	changed, created, deleted, ask, retry, sentence string
}

var staleText = map[domain.Locale]staleWords{
	domain.LocaleEN: {changed: "was changed", created: "was created", deleted: "was deleted",
		ask: "ask for a new proposal", retry: "send /retry %s to ask the same order again with the current content",
		sentence: "%s %s after the proposal was written (proposal base %s, now %s); nothing was written — %s"},
	domain.LocaleJA: {changed: "変更されました", created: "作成されました", deleted: "削除されました",
		ask: "もう一度依頼してください", retry: "/retry %s で同じオーダーに今の内容で依頼し直せます",
		sentence: "%s は提案が書かれた後に%s（提案時 %s、今 %s）。何も書き込んでいません。%s"},
}

// stale tells, in the user's language, which file changed since the proposal, that nothing
// was written, and what to do next.
func stale(l domain.Locale, path, want, now string, exists bool, jobID string) string {
	w, ok := staleText[l]
	if !ok {
		w = staleText[domain.LocaleJA]
	}
	what := w.changed
	switch {
	case want == patch.BaseAbsent:
		what = w.created
	case !exists:
		what = w.deleted
	}
	next := w.ask
	if jobID != "" {
		next = fmt.Sprintf(w.retry, jobID)
	}
	return fmt.Sprintf(w.sentence, path, what, short(want), short(now), next)
}
