package app

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"path"
	"regexp"
	"sort"
	"strings"

	"github.com/picoclaw-suite/picoclaw/pkg/llm"
	"github.com/picoclaw-suite/picoclaw/pkg/workspace"
)

// Workspace is the executor's read-only view of the workspace, as coder-order uses it.
type Workspace interface {
	// ListTree returns the files of the workspace (breadth first, .gitignore respected,
	// secret files withheld), at most maxEntries.
	ListTree(ctx context.Context, maxEntries int) (files []string, truncated bool, err error)
	// ReadFile returns a text file's content (at most maxBytes) and the sha256 of the whole
	// file. It fails with an error wrapping ErrFileNotFound when there is no such file and
	// ErrFileRefused when the view will not show it (secrets, binary).
	ReadFile(ctx context.Context, name string, maxBytes int) (content, sha256 string, truncated bool, err error)
	// Search returns the paths of the files with lines matching the regular expression, one
	// entry per matching line, at most maxMatches.
	Search(ctx context.Context, expr string, maxMatches int) ([]string, error)
	// Remotes maps the repository's git remote names to their URLs (credentials removed);
	// empty when the workspace is not a repository.
	Remotes(ctx context.Context) (map[string]string, error)
}

// Surveyor is a Workspace that lists and searches in one walk (the executor's view does).
type Surveyor interface {
	Survey(ctx context.Context, maxEntries int, expr string, maxMatches int) (files []string, truncated bool, hits []string, err error)
}

// Sentinels of Workspace.ReadFile: the shared view client's (pkg/workspace).
var (
	ErrFileNotFound = workspace.ErrNotFound
	ErrFileRefused  = workspace.ErrRefused
)

// ContextFile is one file of the context pack, with the hash of the content shown.
type ContextFile struct {
	Path    string
	Content string
	SHA256  string
	// Why: "named" (the task or the conversation names it) or "search" (it uses the task's
	// identifiers).
	Why       string
	Truncated bool
}

// ContextPack is what a coder sees of the repository.
type ContextPack struct {
	// Map lists the repository's files (possibly cut to the budget).
	Map      string
	MapFiles int
	Files    []ContextFile
	// Remotes are the repository's git remotes by name: a push names the URL, never the name.
	Remotes map[string]string
	// Tokens is the estimated size of the pack.
	Tokens int64
}

// Hashes maps each file of the pack to the sha256 of its content.
func (c ContextPack) Hashes() map[string]string {
	out := make(map[string]string, len(c.Files))
	for _, f := range c.Files {
		out[f.Path] = f.SHA256
	}
	return out
}

const (
	packTreeEntries  = 5000
	packSearchLimit  = 400
	packMaxFiles     = 12
	packFileMaxBytes = 64 << 10
	// mapShare is the part of the budget the repository map may take.
	mapShare = 4
)

var (
	pathLike   = regexp.MustCompile("[A-Za-z0-9_./-]*[A-Za-z0-9_-]\\.[A-Za-z0-9]{1,8}\\b|[A-Za-z0-9_.-]+/[A-Za-z0-9_./-]+")
	identifier = regexp.MustCompile(`[A-Za-z_][A-Za-z0-9_]{2,}`)
)

// identifiers picks from text the words that look like code names: CamelCase, snake_case,
// words with digits, or `quoted` ones.
func identifiers(text string) []string {
	seen := map[string]bool{}
	var out []string
	add := func(w string) {
		if !seen[w] && len(out) < 16 {
			seen[w] = true
			out = append(out, w)
		}
	}
	for _, q := range regexp.MustCompile("`([^`]+)`").FindAllStringSubmatch(text, -1) {
		for _, w := range identifier.FindAllString(q[1], -1) {
			add(w)
		}
	}
	for _, w := range identifier.FindAllString(text, -1) {
		lower := strings.ToLower(w)
		codeish := strings.Contains(w, "_") || w != lower && w[1:] != strings.ToLower(w[1:]) || strings.ContainsAny(w, "0123456789") ||
			(w[0] >= 'A' && w[0] <= 'Z' && len(w) > 2 && !commonWord[lower])
		if codeish {
			add(w)
		}
	}
	return out
}

// commonWord are capitalised English words that start sentences, not code names.
var commonWord = map[string]bool{
	"the": true, "add": true, "fix": true, "make": true, "please": true, "update": true, "remove": true,
	"rename": true, "write": true, "create": true, "review": true, "change": true, "use": true, "this": true,
	"that": true, "when": true, "then": true, "also": true, "and": true, "for": true, "with": true, "should": true,
	"can": true, "could": true, "would": true, "test": true, "tests": true, "docs": true, "readme": true, "it": true,
	"move": true, "delete": true, "implement": true, "refactor": true, "explain": true, "why": true, "what": true,
	"how": true, "there": true, "after": true, "before": true, "keep": true, "return": true, "returns": true,
}

// BuildContextPack assembles, within budget tokens, a map of the repository, the files the
// task and the conversation name, and the files that use the task's identifiers, each with its
// content and sha256. Secret files never arrive (the view withholds them); the content is
// masked again before any cloud call (pkg/llm).
func BuildContextPack(ctx context.Context, ws Workspace, t Task, budget int64) (ContextPack, error) {
	var pack ContextPack
	if budget <= 0 {
		return pack, nil
	}
	// The task's identifiers are searched for in the same walk as the listing when the view can.
	var search string
	if ids := identifiers(t.Text); len(ids) > 0 {
		quoted := make([]string, len(ids))
		for i, id := range ids {
			quoted[i] = regexp.QuoteMeta(id)
		}
		search = `\b(` + strings.Join(quoted, "|") + `)\b`
	}
	var (
		files, hits []string
		truncated   bool
		err         error
	)
	if sv, ok := ws.(Surveyor); ok && search != "" {
		files, truncated, hits, err = sv.Survey(ctx, packTreeEntries, search, packSearchLimit)
	} else {
		files, truncated, err = ws.ListTree(ctx, packTreeEntries)
		if err == nil && search != "" {
			if hits, err = ws.Search(ctx, search, packSearchLimit); err != nil {
				return pack, fmt.Errorf("search: %w", err)
			}
		}
	}
	if err != nil {
		return pack, fmt.Errorf("list tree: %w", err)
	}
	known := make(map[string]bool, len(files))
	byBase := map[string][]string{}
	for _, f := range files {
		known[f] = true
		b := path.Base(f)
		byBase[b] = append(byBase[b], f)
	}
	text := t.Text + "\n" + strings.Join(t.Context, "\n")

	// Named files first: exact paths, then unique base names.
	var order []ContextFile
	picked := map[string]bool{}
	pick := func(p, why string) {
		if !picked[p] && len(order) < packMaxFiles {
			picked[p] = true
			order = append(order, ContextFile{Path: p, Why: why})
		}
	}
	for _, m := range pathLike.FindAllString(text, -1) {
		m = strings.Trim(strings.TrimPrefix(m, "./"), ".")
		if known[m] {
			pick(m, "named")
		} else if c := byBase[path.Base(m)]; len(c) == 1 && !strings.Contains(m, "/") {
			pick(c[0], "named")
		} else if !strings.Contains(m, "/") && len(c) > 1 && len(c) <= 3 {
			for _, p := range c {
				pick(p, "named")
			}
		}
	}
	// Then the files using the task's identifiers, most matches first.
	if search != "" {
		count := map[string]int{}
		var paths []string
		for _, h := range hits {
			if count[h] == 0 {
				paths = append(paths, h)
			}
			count[h]++
		}
		sort.SliceStable(paths, func(i, j int) bool { return count[paths[i]] > count[paths[j]] })
		for _, p := range paths {
			pick(p, "search")
		}
	}

	// The map takes at most a quarter of the budget; the files share the rest.
	var m strings.Builder
	mapBudget, mapTokens := budget/mapShare, int64(0)
	for _, f := range files {
		line := f + "\n"
		cost := llm.EstimateText(line)
		if mapTokens+cost > mapBudget {
			truncated = true
			break
		}
		m.WriteString(line)
		mapTokens += cost
		pack.MapFiles++
	}
	if truncated {
		fmt.Fprintf(&m, "… (%d of %d+ files listed)\n", pack.MapFiles, len(files))
	}
	pack.Map = m.String()
	pack.Tokens = llm.EstimateText(pack.Map)
	// Remotes are small and optional: a view that cannot list them leaves them out.
	if remotes, err := ws.Remotes(ctx); err == nil && len(remotes) > 0 {
		if cost := llm.EstimateText(fmt.Sprint(remotes)); pack.Tokens+cost <= budget {
			pack.Remotes = remotes
			pack.Tokens += cost
		}
	}

	for _, cf := range order {
		left := budget - pack.Tokens
		if left <= 64 {
			break
		}
		content, sum, cut, err := ws.ReadFile(ctx, cf.Path, packFileMaxBytes)
		switch {
		case errors.Is(err, ErrFileNotFound), errors.Is(err, ErrFileRefused):
			continue
		case err != nil:
			return pack, fmt.Errorf("read %s: %w", cf.Path, err)
		}
		cost := llm.EstimateText(content) + 16
		if cost > left {
			// A file that does not fit whole is left out: a coder must see all of what it changes.
			continue
		}
		cf.Content, cf.SHA256, cf.Truncated = content, sum, cut
		if cut {
			continue
		}
		pack.Files = append(pack.Files, cf)
		pack.Tokens += cost
	}
	return pack, nil
}

// Render writes the pack as the prompt's workspace section.
func (c ContextPack) Render() string {
	if c.Map == "" && len(c.Files) == 0 {
		return ""
	}
	var b strings.Builder
	b.WriteString("Workspace (read-only snapshot; paths relative to the workspace root):\n\nRepository map:\n")
	b.WriteString(c.Map)
	if len(c.Remotes) > 0 {
		b.WriteString("\nGit remotes (a git push names the URL, never the remote's name):\n")
		names := make([]string, 0, len(c.Remotes))
		for n := range c.Remotes {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			fmt.Fprintf(&b, "%s %s\n", n, c.Remotes[n])
		}
	}
	for _, f := range c.Files {
		fmt.Fprintf(&b, "\n--- file %s (sha256 %s, %s) ---\n", f.Path, f.SHA256, f.Why)
		b.WriteString(f.Content)
		if !strings.HasSuffix(f.Content, "\n") {
			b.WriteByte('\n')
		}
		fmt.Fprintf(&b, "--- end of %s ---\n", f.Path)
	}
	b.WriteString("\nWrite the patch against exactly this content, and put each changed file's sha256 from above in \"base\".\n")
	return b.String()
}

// logPack records what the coder was shown (paths and hashes, never content).
func logPack(ctx context.Context, log *slog.Logger, order string, c ContextPack) {
	paths := make([]string, len(c.Files))
	for i, f := range c.Files {
		paths[i] = f.Path
	}
	log.InfoContext(ctx, "coder.context_pack", slog.String("order", order), slog.Int("map_files", c.MapFiles),
		slog.Any("files", paths), slog.Int64("tokens", c.Tokens))
}
