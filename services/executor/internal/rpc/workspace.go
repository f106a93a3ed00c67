package rpc

import (
	"context"

	executorv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/executor/v1"
	"github.com/picoclaw-suite/picoclaw/services/executor/internal/app"
	"github.com/picoclaw-suite/picoclaw/services/executor/internal/workspace"
)

// ListTree lists the tree.
func (h *Handler) ListTree(ctx context.Context, req *executorv1.ListTreeRequest) (*executorv1.ListTreeResponse, error) {
	o := workspace.TreeOptions{Dir: req.GetPath(), MaxDepth: int(req.GetMaxDepth()), MaxEntries: int(req.GetMaxEntries())}
	if s := req.GetSearch(); s != nil {
		so := searchOptions(s)
		o.Search = &so
	}
	t, err := h.view.ListTree(ctx, o)
	if err != nil {
		return nil, h.toConnect(ctx, err)
	}
	res := &executorv1.ListTreeResponse{Truncated: t.Truncated, Withheld: int32(t.Withheld),
		Entries: each(t.Entries, func(e workspace.Entry) *executorv1.TreeEntry {
			return &executorv1.TreeEntry{Path: e.Path, Dir: e.Dir, Size: e.Size}
		})}
	if t.Search != nil {
		res.Search = searchResponse(*t.Search)
	}
	return res, nil
}

func searchOptions(req *executorv1.SearchRequest) workspace.SearchOptions {
	return workspace.SearchOptions{Query: req.GetQuery(), Regexp: req.GetRegexp(),
		CaseInsensitive: req.GetCaseInsensitive(), Dir: req.GetPath(), MaxMatches: int(req.GetMaxMatches())}
}

func searchResponse(r workspace.SearchResult) *executorv1.SearchResponse {
	return &executorv1.SearchResponse{Truncated: r.Truncated, Matches: each(r.Matches, func(m workspace.Match) *executorv1.SearchMatch {
		return &executorv1.SearchMatch{Path: m.Path, Line: int32(m.Line), Text: m.Text}
	})}
}

// ReadFile reads one file.
func (h *Handler) ReadFile(ctx context.Context, req *executorv1.ReadFileRequest) (*executorv1.ReadFileResponse, error) {
	f, err := h.view.ReadFile(ctx, req.GetPath(), workspace.ReadOptions{StartLine: int(req.GetStartLine()), EndLine: int(req.GetEndLine()), MaxBytes: int(req.GetMaxBytes())})
	if err != nil {
		return nil, h.toConnect(ctx, err)
	}
	return &executorv1.ReadFileResponse{Path: f.Path, Content: f.Content, Sha256: f.SHA256, Size: f.Size,
		Binary: f.Binary, Truncated: f.Truncated, TotalLines: int32(f.TotalLines)}, nil
}

// Search searches the tree.
func (h *Handler) Search(ctx context.Context, req *executorv1.SearchRequest) (*executorv1.SearchResponse, error) {
	r, err := h.view.Search(ctx, searchOptions(req))
	if err != nil {
		return nil, h.toConnect(ctx, err)
	}
	return searchResponse(r), nil
}

// GitStatus is git status.
func (h *Handler) GitStatus(ctx context.Context, _ *executorv1.GitStatusRequest) (*executorv1.GitStatusResponse, error) {
	st, err := h.view.GitStatus(ctx)
	if err != nil {
		return nil, h.toConnect(ctx, err)
	}
	return &executorv1.GitStatusResponse{Branch: st.Branch, NotARepository: st.NotRepository,
		Entries: each(st.Entries, func(e app.StatusEntry) *executorv1.GitStatusEntry {
			return &executorv1.GitStatusEntry{Path: e.Path, Status: e.Status}
		})}, nil
}

// GitLog lists commits.
func (h *Handler) GitLog(ctx context.Context, req *executorv1.GitLogRequest) (*executorv1.GitLogResponse, error) {
	commits, none, err := h.view.GitLog(ctx, int(req.GetMaxCommits()), req.GetPath())
	if err != nil {
		return nil, h.toConnect(ctx, err)
	}
	return &executorv1.GitLogResponse{NotARepository: none, Commits: each(commits, func(c app.Commit) *executorv1.GitCommit {
		return &executorv1.GitCommit{Hash: c.Hash, Author: c.Author, Date: c.Date, Subject: c.Subject}
	})}, nil
}

// DiffSummary counts uncommitted changes.
func (h *Handler) DiffSummary(ctx context.Context, _ *executorv1.DiffSummaryRequest) (*executorv1.DiffSummaryResponse, error) {
	files, none, err := h.view.DiffSummary(ctx)
	if err != nil {
		return nil, h.toConnect(ctx, err)
	}
	return &executorv1.DiffSummaryResponse{NotARepository: none, Files: each(files, func(f app.FileStat) *executorv1.DiffFileStat {
		return &executorv1.DiffFileStat{Path: f.Path, Additions: int32(f.Additions), Deletions: int32(f.Deletions), Binary: f.Binary}
	})}, nil
}

// Remotes lists remotes.
func (h *Handler) Remotes(ctx context.Context, _ *executorv1.RemotesRequest) (*executorv1.RemotesResponse, error) {
	rs, none, err := h.view.Remotes(ctx)
	if err != nil {
		return nil, h.toConnect(ctx, err)
	}
	return &executorv1.RemotesResponse{NotARepository: none, Remotes: each(rs, func(r app.Remote) *executorv1.Remote {
		return &executorv1.Remote{Name: r.Name, Url: r.URL}
	})}, nil
}

// each converts every item of a view's list into its wire form; nil stays nil.
func each[T, W any](items []T, wire func(T) W) []W {
	if items == nil {
		return nil
	}
	out := make([]W, len(items))
	for i, it := range items {
		out[i] = wire(it)
	}
	return out
}
