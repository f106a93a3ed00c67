package app

import (
	"context"
	"errors"
	"log/slog"

	"github.com/picoclaw-suite/picoclaw/pkg/patch"
	"github.com/picoclaw-suite/picoclaw/services/coder-order/internal/domain"
)

// bindBase fixes, for every file the patch changes, the content it was written against and
// writes it into the patch (patch.BindBase): the hash of the content the coder was shown
// (shown: the context pack's files and those it read through the tools); for a file it was
// not shown, the hash the coder stated, else the file's hash now. The
// approval then covers the base, and the executor refuses the job once a file has changed.
func (p *Proposer) bindBase(ctx context.Context, order string, prop *domain.Proposal, shown map[string]string) {
	stated := prop.Base
	prop.Base = nil
	if prop.Patch == "" {
		return
	}
	parsed, err := p.check(prop.Patch)
	if err != nil {
		return
	}
	base := map[string]string{}
	for _, op := range parsed.Operations {
		if op.Type != patch.TypeFileEdit {
			continue
		}
		t := op.Target
		if _, done := base[t]; done {
			continue
		}
		if h, ok := shown[t]; ok {
			base[t] = h
			continue
		}
		if h, ok := stated[t]; ok {
			base[t] = h
			continue
		}
		if p.workspace == nil {
			continue
		}
		_, h, _, err := p.workspace.ReadFile(ctx, t, 1)
		switch {
		case err == nil:
			base[t] = h
		case errors.Is(err, ErrFileNotFound):
			base[t] = patch.BaseAbsent
		default:
			p.log.WarnContext(ctx, "coder.base_unknown", slog.String("order", order), slog.String("path", t), slog.String("error", err.Error()))
		}
	}
	if len(base) == 0 {
		return
	}
	text := prop.Patch
	if current := p.updatedContents(ctx, order, parsed, base); len(current) > 0 {
		diffed, err := patch.DiffUpdates(text, current, patch.Options{})
		if err != nil {
			p.log.WarnContext(ctx, "coder.update_not_diffed", slog.String("order", order), slog.String("error", err.Error()))
		} else {
			text = diffed
		}
	}
	bound, err := patch.BindBase(text, base, patch.Options{})
	if err != nil {
		p.log.WarnContext(ctx, "coder.base_unbound", slog.String("order", order), slog.String("error", err.Error()))
		return
	}
	prop.Patch, prop.Base = bound, base
}

// maxDiffedFile is the largest file whose whole-file update is rewritten as its diff.
const maxDiffedFile = 1 << 20

// updatedContents returns, for each whole-file update of an existing file, the content the
// update replaces — exactly the content of its base (read now and checked against the base
// hash) — so the update can be shown and applied as its real diff. Files whose base content
// cannot be had are left out (their update stays whole; the executor still refuses it if the
// file changed).
func (p *Proposer) updatedContents(ctx context.Context, order string, parsed *patch.Patch, base map[string]string) map[string]string {
	out := map[string]string{}
	if p.workspace == nil {
		return out
	}
	for _, op := range parsed.Operations {
		t := op.Target
		b := base[t]
		if op.Type != patch.TypeFileEdit || op.Action != patch.ActionUpdate || b == "" || b == patch.BaseAbsent {
			continue
		}
		if _, done := out[t]; done {
			continue
		}
		content, h, truncated, err := p.workspace.ReadFile(ctx, t, maxDiffedFile)
		if err != nil || truncated || h != b {
			p.log.InfoContext(ctx, "coder.update_kept_whole", slog.String("order", order), slog.String("path", t),
				slog.Bool("truncated", truncated), slog.Bool("base_changed", err == nil && h != b))
			continue
		}
		out[t] = content
	}
	return out
}
