package domain

import (
	"encoding/json"
	"path"
	"regexp"
	"sort"
	"strings"
)

// PatchSummary is what the comparison needs from a patch: the paths it touches and how many
// operations it holds. Approval parses patches itself for policy; this view only informs the
// user which proposals collide.
type PatchSummary struct {
	AffectedPaths []string
	Operations    int
}

var (
	fenceOpen  = regexp.MustCompile("(?m)^\\s*```([^\\s`]*)\\s*$")
	diffGit    = regexp.MustCompile(`(?m)^diff --git a/(\S+) b/(\S+)`)
	diffHeader = regexp.MustCompile(`(?m)^(?:---|\+\+\+) (\S+)`)
)

// SummarizePatch reads the three patch formats of SPEC §6: a JSON array of commands,
// Markdown fences (```lang:path), or a unified / git diff.
func SummarizePatch(patch string) PatchSummary {
	text := strings.TrimSpace(patch)
	if text == "" {
		return PatchSummary{}
	}
	if strings.HasPrefix(text, "[") {
		if s, ok := summarizeJSON(text); ok {
			return s
		}
	}
	if s, ok := summarizeDiff(text); ok {
		return s
	}
	return summarizeFences(text)
}

type jsonCommand struct {
	Type     string            `json:"type"`
	Action   string            `json:"action"`
	Target   string            `json:"target"`
	Metadata map[string]string `json:"metadata"`
}

func summarizeJSON(text string) (PatchSummary, bool) {
	var cmds []jsonCommand
	if err := json.Unmarshal([]byte(text), &cmds); err != nil {
		return PatchSummary{}, false
	}
	set := map[string]bool{}
	for _, c := range cmds {
		if c.Type != "file_edit" {
			continue
		}
		addPath(set, c.Target)
		if c.Action == "rename" {
			addPath(set, c.Metadata["to"])
		}
	}
	return PatchSummary{AffectedPaths: sorted(set), Operations: len(cmds)}, true
}

func summarizeDiff(text string) (PatchSummary, bool) {
	set := map[string]bool{}
	files := 0
	if ms := diffGit.FindAllStringSubmatch(text, -1); len(ms) > 0 {
		for _, m := range ms {
			addPath(set, m[1])
			addPath(set, m[2])
		}
		files = len(ms)
	} else {
		ms := diffHeader.FindAllStringSubmatch(text, -1)
		if len(ms) == 0 || !strings.Contains(text, "\n@@ ") {
			return PatchSummary{}, false
		}
		for _, m := range ms {
			addPath(set, m[1])
		}
		files = len(ms) / 2
	}
	return PatchSummary{AffectedPaths: sorted(set), Operations: files}, true
}

func summarizeFences(text string) PatchSummary {
	set := map[string]bool{}
	ops := 0
	inFence := false
	for _, m := range fenceOpen.FindAllStringSubmatch(text, -1) {
		if inFence {
			inFence = false
			continue
		}
		inFence = true
		info := m[1]
		if info == "" {
			continue
		}
		ops++
		if _, p, ok := strings.Cut(info, ":"); ok {
			addPath(set, p)
		}
	}
	return PatchSummary{AffectedPaths: sorted(set), Operations: ops}
}

// addPath normalises a patch path (a/ b/ prefixes, ./, duplicate slashes) and ignores
// /dev/null.
func addPath(set map[string]bool, p string) {
	p = strings.TrimSpace(p)
	if p == "" || p == "/dev/null" {
		return
	}
	if strings.HasPrefix(p, "a/") || strings.HasPrefix(p, "b/") {
		p = p[2:]
	}
	p = path.Clean(strings.TrimPrefix(p, "./"))
	if p == "." {
		return
	}
	set[p] = true
}

func sorted(set map[string]bool) []string {
	out := make([]string, 0, len(set))
	for p := range set {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}
