package domain

import (
	"slices"

	"github.com/picoclaw-suite/picoclaw/pkg/patch"
)

// PatchSummary is what the comparison needs from a patch. It comes from the suite's one patch
// parser (pkg/patch), the same one approval and the executor use, so the files shown to the
// user are the files that would be approved.
type PatchSummary struct {
	AffectedPaths []string
	Operations    int
	Destructive   bool
	UsesBrowser   bool
	// Error is set when the patch does not parse; approval would refuse it as well.
	Error string
}

// SummarizePatch parses a proposal's patch (JSON commands, Markdown fences or a unified diff).
func SummarizePatch(text string) PatchSummary {
	p, err := patch.Parse(text, patch.Options{})
	if err != nil {
		return PatchSummary{Error: err.Error()}
	}
	return PatchSummary{
		AffectedPaths: p.AffectedPaths,
		Operations:    len(p.Operations),
		Destructive:   slices.Contains(p.Flags, patch.FlagDelete) || slices.Contains(p.Flags, patch.FlagBroadOverwrite),
		UsesBrowser:   slices.Contains(p.Flags, patch.FlagBrowser),
	}
}
