package workspace

import (
	"context"
	"fmt"
	"strings"
	"sync"

	executorv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/executor/v1"
	"github.com/picoclaw-suite/picoclaw/pkg/jobid"
	"github.com/picoclaw-suite/picoclaw/pkg/llm"
)

// Tool names.
const (
	ToolListTree    = "list_tree"
	ToolReadFile    = "read_file"
	ToolSearch      = "search"
	ToolGitStatus   = "git_status"
	ToolGitLog      = "git_log"
	ToolDiffSummary = "diff_summary"
)

// Caps of what one tool call asks the view for.
const (
	DefaultMaxResultBytes = 24 << 10
	treeEntries           = 400
	searchMatches         = 100
	defaultLogCommits     = 20
	maxLogCommits         = 50
)

// Options tune the tools.
type Options struct {
	// MaxResultBytes caps each result the model reads (default DefaultMaxResultBytes): a local
	// model's context is small, a cloud model's tokens cost.
	MaxResultBytes int
}

// Tools are the read-only tools of one model run over a Client. Open one per run: it records
// the files the model read (Seen), e.g. to bind a patch to what its author saw.
type Tools struct {
	c    *Client
	max  int
	mu   sync.Mutex
	seen map[string]string
}

// Tools opens the tools of one run.
func (c *Client) Tools(o Options) *Tools {
	if o.MaxResultBytes <= 0 {
		o.MaxResultBytes = DefaultMaxResultBytes
	}
	return &Tools{c: c, max: o.MaxResultBytes, seen: map[string]string{}}
}

func object(required []string, props map[string]any) map[string]any {
	if required == nil {
		required = []string{}
	}
	return map[string]any{"type": "object", "properties": props, "required": required}
}

func prop(typ, desc string) map[string]any { return map[string]any{"type": typ, "description": desc} }

// Specs are the tools as the model is offered them.
func (t *Tools) Specs() []llm.ToolSpec {
	return []llm.ToolSpec{
		{Name: ToolListTree, Description: "List the files and directories of the workspace (read-only; .gitignore respected, files holding secrets left out). Directories end with /.",
			Parameters: object(nil, map[string]any{
				"path":      prop("string", "Directory relative to the workspace root; empty for the root."),
				"max_depth": prop("integer", "How many directory levels to descend (default 3)."),
			})},
		{Name: ToolReadFile, Description: "Read a text file of the workspace, optionally only a range of lines. The header gives the sha256 of the whole file, which a patch names as its base. Files holding secrets are never shown.",
			Parameters: object([]string{"path"}, map[string]any{
				"path":       prop("string", "File path relative to the workspace root."),
				"start_line": prop("integer", "First line to return, 1-based (default 1)."),
				"end_line":   prop("integer", "Last line to return (default: the end of the file)."),
			})},
		{Name: ToolSearch, Description: "Search the text files of the workspace for a literal string or a regular expression (Go syntax). Returns path:line: text for each matching line.",
			Parameters: object([]string{"query"}, map[string]any{
				"query":            prop("string", "The text or regular expression to find."),
				"regexp":           prop("boolean", "Treat query as a regular expression (default false: a literal string)."),
				"path":             prop("string", "Directory to search, relative to the workspace root; empty for all."),
				"case_insensitive": prop("boolean", "Ignore case."),
			})},
		{Name: ToolGitStatus, Description: "Show the branch and the changed and untracked files of the workspace's git repository.",
			Parameters: object(nil, map[string]any{})},
		{Name: ToolGitLog, Description: "List recent commits (hash, date, author, subject).",
			Parameters: object(nil, map[string]any{
				"max_commits": prop("integer", fmt.Sprintf("How many commits (default %d, at most %d).", defaultLogCommits, maxLogCommits)),
				"path":        prop("string", "Only commits touching this path."),
			})},
		{Name: ToolDiffSummary, Description: "Count the uncommitted changes per file (added and deleted lines).",
			Parameters: object(nil, map[string]any{})},
	}
}

// Seen maps each file the run read to the sha256 of the whole file at that read.
func (t *Tools) Seen() map[string]string {
	t.mu.Lock()
	defer t.mu.Unlock()
	out := make(map[string]string, len(t.seen))
	for k, v := range t.seen {
		out[k] = v
	}
	return out
}

// Execute runs one call (an llm.ToolFunc). A refusal of the view, a missing file or bad
// arguments come back as an error for the model to read; so does an unreachable executor.
func (t *Tools) Execute(ctx context.Context, call llm.ToolCall) (string, error) {
	var out string
	var err error
	switch call.Name {
	case ToolListTree:
		out, err = t.listTree(ctx, call)
	case ToolReadFile:
		out, err = t.readFile(ctx, call)
	case ToolSearch:
		out, err = t.search(ctx, call)
	case ToolGitStatus:
		out, err = t.gitStatus(ctx)
	case ToolGitLog:
		out, err = t.gitLog(ctx, call)
	case ToolDiffSummary:
		out, err = t.diffSummary(ctx)
	default:
		return "", fmt.Errorf("unknown tool %q", call.Name)
	}
	if err != nil {
		return "", err
	}
	return t.cap(out), nil
}

// cap cuts a result at MaxResultBytes, on a line boundary where it can.
func (t *Tools) cap(s string) string {
	if len(s) <= t.max {
		return s
	}
	cut := s[:t.max]
	if i := strings.LastIndexByte(cut, '\n'); i > t.max/2 {
		cut = cut[:i+1]
	}
	return strings.ToValidUTF8(cut, "") + fmt.Sprintf("\n… (result cut at %d bytes; ask for less, e.g. a line range or a narrower path)\n", len(cut))
}

func (t *Tools) listTree(ctx context.Context, call llm.ToolCall) (string, error) {
	var a struct {
		Path     string `json:"path"`
		MaxDepth int    `json:"max_depth"`
	}
	if err := call.ParseArguments(&a); err != nil {
		return "", err
	}
	depth := a.MaxDepth
	if depth <= 0 {
		depth = 3
	}
	res, err := t.c.c.ListTree(ctx, &executorv1.ListTreeRequest{JobId: jobid.FromContext(ctx), Path: a.Path,
		MaxDepth: int32(min(depth, 64)), MaxEntries: treeEntries})
	if err != nil {
		return "", viewError(a.Path, err)
	}
	var b strings.Builder
	for _, e := range res.GetEntries() {
		if e.GetDir() {
			fmt.Fprintf(&b, "%s/\n", e.GetPath())
		} else {
			fmt.Fprintf(&b, "%s (%d bytes)\n", e.GetPath(), e.GetSize())
		}
	}
	if len(res.GetEntries()) == 0 {
		b.WriteString("(empty)\n")
	}
	if res.GetTruncated() {
		b.WriteString("… more entries exist: list a subdirectory or lower max_depth\n")
	}
	if n := res.GetWithheld(); n > 0 {
		fmt.Fprintf(&b, "(%d files holding secrets are not shown)\n", n)
	}
	return b.String(), nil
}

func (t *Tools) readFile(ctx context.Context, call llm.ToolCall) (string, error) {
	var a struct {
		Path      string `json:"path"`
		StartLine int    `json:"start_line"`
		EndLine   int    `json:"end_line"`
	}
	if err := call.ParseArguments(&a); err != nil {
		return "", err
	}
	if strings.TrimSpace(a.Path) == "" {
		return "", fmt.Errorf("%w: path is required", ErrRefused)
	}
	res, err := t.c.read(ctx, &executorv1.ReadFileRequest{Path: a.Path, StartLine: int32(max(a.StartLine, 0)),
		EndLine: int32(max(a.EndLine, 0)), MaxBytes: int64(max(t.max-512, 512))})
	if err != nil {
		return "", err
	}
	t.mu.Lock()
	t.seen[res.GetPath()] = res.GetSha256()
	t.mu.Unlock()
	var b strings.Builder
	fmt.Fprintf(&b, "file %s (sha256 %s, %d lines, %d bytes)", res.GetPath(), res.GetSha256(), res.GetTotalLines(), res.GetSize())
	if a.StartLine > 1 || a.EndLine > 0 {
		end := a.EndLine
		if end <= 0 || end > int(res.GetTotalLines()) {
			end = int(res.GetTotalLines())
		}
		fmt.Fprintf(&b, ", lines %d-%d", max(a.StartLine, 1), end)
	}
	b.WriteString(":\n")
	b.WriteString(res.GetContent())
	if !strings.HasSuffix(res.GetContent(), "\n") {
		b.WriteByte('\n')
	}
	if res.GetTruncated() && a.StartLine <= 1 && a.EndLine <= 0 {
		b.WriteString("… (cut: the file is longer; read a line range)\n")
	}
	return b.String(), nil
}

func (t *Tools) search(ctx context.Context, call llm.ToolCall) (string, error) {
	var a struct {
		Query           string `json:"query"`
		Regexp          bool   `json:"regexp"`
		Path            string `json:"path"`
		CaseInsensitive bool   `json:"case_insensitive"`
	}
	if err := call.ParseArguments(&a); err != nil {
		return "", err
	}
	res, err := t.c.c.Search(ctx, &executorv1.SearchRequest{JobId: jobid.FromContext(ctx), Query: a.Query, Regexp: a.Regexp,
		Path: a.Path, CaseInsensitive: a.CaseInsensitive, MaxMatches: searchMatches})
	if err != nil {
		return "", viewError("", err)
	}
	var b strings.Builder
	for _, m := range res.GetMatches() {
		fmt.Fprintf(&b, "%s:%d: %s\n", m.GetPath(), m.GetLine(), m.GetText())
	}
	if len(res.GetMatches()) == 0 {
		b.WriteString("(no matches)\n")
	}
	if res.GetTruncated() {
		b.WriteString("… more matches exist: narrow the query or the path\n")
	}
	return b.String(), nil
}

const notRepository = "the workspace is not a git repository\n"

func (t *Tools) gitStatus(ctx context.Context) (string, error) {
	res, err := t.c.c.GitStatus(ctx, &executorv1.GitStatusRequest{JobId: jobid.FromContext(ctx)})
	if err != nil {
		return "", viewError("", err)
	}
	if res.GetNotARepository() {
		return notRepository, nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "branch %s\n", res.GetBranch())
	for _, e := range res.GetEntries() {
		fmt.Fprintf(&b, "%s %s\n", e.GetStatus(), e.GetPath())
	}
	if len(res.GetEntries()) == 0 {
		b.WriteString("nothing to commit, working tree clean\n")
	}
	return b.String(), nil
}

func (t *Tools) gitLog(ctx context.Context, call llm.ToolCall) (string, error) {
	var a struct {
		MaxCommits int    `json:"max_commits"`
		Path       string `json:"path"`
	}
	if err := call.ParseArguments(&a); err != nil {
		return "", err
	}
	n := a.MaxCommits
	if n <= 0 {
		n = defaultLogCommits
	}
	res, err := t.c.c.GitLog(ctx, &executorv1.GitLogRequest{JobId: jobid.FromContext(ctx), MaxCommits: int32(min(n, maxLogCommits)), Path: a.Path})
	if err != nil {
		return "", viewError(a.Path, err)
	}
	if res.GetNotARepository() {
		return notRepository, nil
	}
	var b strings.Builder
	for _, c := range res.GetCommits() {
		fmt.Fprintf(&b, "%s %s %s: %s\n", c.GetHash(), c.GetDate(), c.GetAuthor(), c.GetSubject())
	}
	if len(res.GetCommits()) == 0 {
		b.WriteString("(no commits)\n")
	}
	return b.String(), nil
}

func (t *Tools) diffSummary(ctx context.Context) (string, error) {
	res, err := t.c.c.DiffSummary(ctx, &executorv1.DiffSummaryRequest{JobId: jobid.FromContext(ctx)})
	if err != nil {
		return "", viewError("", err)
	}
	if res.GetNotARepository() {
		return notRepository, nil
	}
	var b strings.Builder
	for _, f := range res.GetFiles() {
		if f.GetBinary() {
			fmt.Fprintf(&b, "%s binary\n", f.GetPath())
			continue
		}
		fmt.Fprintf(&b, "%s +%d -%d\n", f.GetPath(), f.GetAdditions(), f.GetDeletions())
	}
	if len(res.GetFiles()) == 0 {
		b.WriteString("no uncommitted changes\n")
	}
	return b.String(), nil
}
