package rpc

import (
	"context"
	"log/slog"

	executorv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/executor/v1"
	"github.com/picoclaw-suite/picoclaw/gen/picoclaw/executor/v1/executorv1connect"
	"github.com/picoclaw-suite/picoclaw/pkg/rpcserver"
	"github.com/picoclaw-suite/picoclaw/services/executor/internal/app"
	"github.com/picoclaw-suite/picoclaw/services/executor/internal/workspace"
)

// WorkspaceHandler implements executorv1connect.WorkspaceServiceHandler: the read-only view.
type WorkspaceHandler struct {
	view *app.View
	log  *slog.Logger
}

// NewWorkspaceHandler returns the handler.
func NewWorkspaceHandler(view *app.View, log *slog.Logger) *WorkspaceHandler {
	return &WorkspaceHandler{view: view, log: log}
}

var _ executorv1connect.WorkspaceServiceHandler = (*WorkspaceHandler)(nil)

func (h *WorkspaceHandler) toConnect(ctx context.Context, err error) error {
	return rpcserver.ToConnect(ctx, h.log, "executor", err)
}

// ListTree lists the tree.
func (h *WorkspaceHandler) ListTree(ctx context.Context, req *executorv1.ListTreeRequest) (*executorv1.ListTreeResponse, error) {
	t, err := h.view.ListTree(ctx, workspace.TreeOptions{Dir: req.GetPath(), MaxDepth: int(req.GetMaxDepth()), MaxEntries: int(req.GetMaxEntries())})
	if err != nil {
		return nil, h.toConnect(ctx, err)
	}
	out := &executorv1.ListTreeResponse{Truncated: t.Truncated, Withheld: int32(t.Withheld)}
	for _, e := range t.Entries {
		out.Entries = append(out.Entries, &executorv1.TreeEntry{Path: e.Path, Dir: e.Dir, Size: e.Size})
	}
	return out, nil
}

// ReadFile reads one file.
func (h *WorkspaceHandler) ReadFile(ctx context.Context, req *executorv1.ReadFileRequest) (*executorv1.ReadFileResponse, error) {
	f, err := h.view.ReadFile(ctx, req.GetPath(), workspace.ReadOptions{StartLine: int(req.GetStartLine()), EndLine: int(req.GetEndLine()), MaxBytes: int(req.GetMaxBytes())})
	if err != nil {
		return nil, h.toConnect(ctx, err)
	}
	return &executorv1.ReadFileResponse{Path: f.Path, Content: f.Content, Sha256: f.SHA256, Size: f.Size,
		Binary: f.Binary, Truncated: f.Truncated, TotalLines: int32(f.TotalLines)}, nil
}

// Search searches the tree.
func (h *WorkspaceHandler) Search(ctx context.Context, req *executorv1.SearchRequest) (*executorv1.SearchResponse, error) {
	r, err := h.view.Search(ctx, workspace.SearchOptions{Query: req.GetQuery(), Regexp: req.GetRegexp(),
		CaseInsensitive: req.GetCaseInsensitive(), Dir: req.GetPath(), MaxMatches: int(req.GetMaxMatches())})
	if err != nil {
		return nil, h.toConnect(ctx, err)
	}
	out := &executorv1.SearchResponse{Truncated: r.Truncated}
	for _, m := range r.Matches {
		out.Matches = append(out.Matches, &executorv1.SearchMatch{Path: m.Path, Line: int32(m.Line), Text: m.Text})
	}
	return out, nil
}

// GitStatus is git status.
func (h *WorkspaceHandler) GitStatus(ctx context.Context, _ *executorv1.GitStatusRequest) (*executorv1.GitStatusResponse, error) {
	st, err := h.view.GitStatus(ctx)
	if err != nil {
		return nil, h.toConnect(ctx, err)
	}
	out := &executorv1.GitStatusResponse{Branch: st.Branch, NotARepository: st.NotRepository}
	for _, e := range st.Entries {
		out.Entries = append(out.Entries, &executorv1.GitStatusEntry{Path: e.Path, Status: e.Status})
	}
	return out, nil
}

// GitLog lists commits.
func (h *WorkspaceHandler) GitLog(ctx context.Context, req *executorv1.GitLogRequest) (*executorv1.GitLogResponse, error) {
	commits, none, err := h.view.GitLog(ctx, int(req.GetMaxCommits()), req.GetPath())
	if err != nil {
		return nil, h.toConnect(ctx, err)
	}
	out := &executorv1.GitLogResponse{NotARepository: none}
	for _, c := range commits {
		out.Commits = append(out.Commits, &executorv1.GitCommit{Hash: c.Hash, Author: c.Author, Date: c.Date, Subject: c.Subject})
	}
	return out, nil
}

// DiffSummary counts uncommitted changes.
func (h *WorkspaceHandler) DiffSummary(ctx context.Context, _ *executorv1.DiffSummaryRequest) (*executorv1.DiffSummaryResponse, error) {
	files, none, err := h.view.DiffSummary(ctx)
	if err != nil {
		return nil, h.toConnect(ctx, err)
	}
	out := &executorv1.DiffSummaryResponse{NotARepository: none}
	for _, f := range files {
		out.Files = append(out.Files, &executorv1.DiffFileStat{Path: f.Path, Additions: int32(f.Additions), Deletions: int32(f.Deletions), Binary: f.Binary})
	}
	return out, nil
}

// Remotes lists remotes.
func (h *WorkspaceHandler) Remotes(ctx context.Context, _ *executorv1.RemotesRequest) (*executorv1.RemotesResponse, error) {
	rs, none, err := h.view.Remotes(ctx)
	if err != nil {
		return nil, h.toConnect(ctx, err)
	}
	out := &executorv1.RemotesResponse{NotARepository: none}
	for _, r := range rs {
		out.Remotes = append(out.Remotes, &executorv1.Remote{Name: r.Name, Url: r.URL})
	}
	return out, nil
}
