// Package workspacetest serves the executor's WorkspaceService over Connect from files held in
// memory, for the tests of the services that read the workspace (coder-order, router-shiro),
// which may not start the executor itself. It keeps the view's contract as far as its callers
// can see it: files whose names say they hold secrets (.env*, *.pem, *.key, id_rsa*) are left
// out of listings and searches and refused with PermissionDenied, a missing file is NotFound,
// line ranges and byte caps cut as the executor does, the sha256 is the whole file's. The
// executor's own tests cover the real view (confinement, .gitignore, content-based secrets).
package workspacetest

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"net/http/httptest"
	"path"
	"regexp"
	"sort"
	"strings"
	"sync"
	"testing"

	"connectrpc.com/connect"

	executorv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/executor/v1"
	"github.com/picoclaw-suite/picoclaw/gen/picoclaw/executor/v1/executorv1connect"
	"github.com/picoclaw-suite/picoclaw/pkg/testinfra"
)

// Git is what the fake's git RPCs answer; nil in Server.Git means "not a repository".
type Git struct {
	Branch  string
	Status  []*executorv1.GitStatusEntry
	Commits []*executorv1.GitCommit
	Diff    []*executorv1.DiffFileStat
	Remotes map[string]string
}

// Call is one RPC the fake received: the method, its path argument (or query) and job id.
type Call struct {
	Method string
	Arg    string
	JobID  string
}

// Server is the fake view.
type Server struct {
	*httptest.Server
	files map[string]string
	git   *Git

	mu    sync.Mutex
	calls []Call
}

// Start serves files (slash paths relative to the workspace root) and git (nil: not a
// repository) until the test ends, over HTTP/1.1 and h2c like the executor.
func Start(t testing.TB, files map[string]string, git *Git) *Server {
	t.Helper()
	s := &Server{files: files, git: git}
	_, h := executorv1connect.NewWorkspaceServiceHandler(s)
	s.Server = testinfra.H2CServer(t, h)
	return s
}

// Client is a Connect client of the fake.
func (s *Server) Client() executorv1connect.WorkspaceServiceClient {
	return executorv1connect.NewWorkspaceServiceClient(s.Server.Client(), s.URL)
}

// Calls are the RPCs received so far.
func (s *Server) Calls() []Call {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Call(nil), s.calls...)
}

func (s *Server) record(method, arg, job string) {
	s.mu.Lock()
	s.calls = append(s.calls, Call{Method: method, Arg: arg, JobID: job})
	s.mu.Unlock()
}

// Secret reports whether the view withholds name, by the names the executor knows.
func Secret(name string) bool {
	b := strings.ToLower(path.Base(name))
	return strings.HasPrefix(b, ".env") || strings.HasSuffix(b, ".env") || strings.HasPrefix(b, "id_rsa") ||
		strings.HasSuffix(b, ".pem") || strings.HasSuffix(b, ".key")
}

func (s *Server) paths(dir string) []string {
	dir = strings.Trim(dir, "/.")
	var out []string
	for p := range s.files {
		if !Secret(p) && (dir == "" || strings.HasPrefix(p, dir+"/")) {
			out = append(out, p)
		}
	}
	sort.Strings(out)
	return out
}

// ListTree lists files and their directories.
func (s *Server) ListTree(_ context.Context, req *executorv1.ListTreeRequest) (*executorv1.ListTreeResponse, error) {
	s.record("ListTree", req.GetPath(), req.GetJobId())
	depth, limit := int(req.GetMaxDepth()), int(req.GetMaxEntries())
	if depth <= 0 {
		depth = 8
	}
	if limit <= 0 {
		limit = 2000
	}
	res := &executorv1.ListTreeResponse{}
	base := strings.Trim(req.GetPath(), "/.")
	dirs := map[string]bool{}
	for p := range s.files {
		if Secret(p) && (base == "" || strings.HasPrefix(p, base+"/")) {
			res.Withheld++
		}
	}
	for _, p := range s.paths(base) {
		rel := strings.TrimPrefix(strings.TrimPrefix(p, base), "/")
		parts := strings.Split(rel, "/")
		for i := 1; i < len(parts) && i <= depth; i++ {
			d := path.Join(base, strings.Join(parts[:i], "/"))
			if !dirs[d] {
				dirs[d] = true
				res.Entries = append(res.Entries, &executorv1.TreeEntry{Path: d, Dir: true})
			}
		}
		if len(parts) <= depth {
			res.Entries = append(res.Entries, &executorv1.TreeEntry{Path: p, Size: int64(len(s.files[p]))})
		}
	}
	sort.Slice(res.Entries, func(i, j int) bool { return res.Entries[i].Path < res.Entries[j].Path })
	if len(res.Entries) > limit {
		res.Entries, res.Truncated = res.Entries[:limit], true
	}
	return res, nil
}

// ReadFile reads one file.
func (s *Server) ReadFile(_ context.Context, req *executorv1.ReadFileRequest) (*executorv1.ReadFileResponse, error) {
	p := req.GetPath()
	s.record("ReadFile", p, req.GetJobId())
	if Secret(p) {
		return nil, connect.NewError(connect.CodePermissionDenied, fmt.Errorf("%s holds secrets and is never shown", p))
	}
	data, ok := s.files[p]
	if !ok {
		return nil, connect.NewError(connect.CodeNotFound, errors.New("not found"))
	}
	sum := sha256.Sum256([]byte(data))
	all := strings.SplitAfter(data, "\n")
	if all[len(all)-1] == "" {
		all = all[:len(all)-1] // nothing after the last newline
	}
	res := &executorv1.ReadFileResponse{Path: p, Sha256: hex.EncodeToString(sum[:]), Size: int64(len(data)), TotalLines: int32(len(all))}
	first, last := max(int(req.GetStartLine()), 1), int(req.GetEndLine())
	if last <= 0 || last > len(all) {
		last = len(all)
	}
	switch {
	case first > len(all) && len(all) > 0:
		return nil, connect.NewError(connect.CodeInvalidArgument, fmt.Errorf("%s has %d lines, start_line %d", p, len(all), first))
	case first <= last:
		res.Content = strings.Join(all[first-1:last], "")
		res.Truncated = first > 1 || last < len(all)
	}
	if limit := int(req.GetMaxBytes()); limit > 0 && len(res.Content) > limit {
		res.Content, res.Truncated = strings.ToValidUTF8(res.Content[:limit], ""), true
	}
	return res, nil
}

// Search finds matching lines.
func (s *Server) Search(_ context.Context, req *executorv1.SearchRequest) (*executorv1.SearchResponse, error) {
	s.record("Search", req.GetQuery(), req.GetJobId())
	expr := req.GetQuery()
	if expr == "" {
		return nil, connect.NewError(connect.CodeInvalidArgument, errors.New("empty query"))
	}
	if !req.GetRegexp() {
		expr = regexp.QuoteMeta(expr)
	}
	if req.GetCaseInsensitive() {
		expr = "(?i)" + expr
	}
	re, err := regexp.Compile(expr)
	if err != nil {
		return nil, connect.NewError(connect.CodeInvalidArgument, fmt.Errorf("regexp: %w", err))
	}
	limit := int(req.GetMaxMatches())
	if limit <= 0 {
		limit = 200
	}
	res := &executorv1.SearchResponse{}
	for _, p := range s.paths(req.GetPath()) {
		for i, l := range strings.Split(s.files[p], "\n") {
			if !re.MatchString(l) {
				continue
			}
			if len(res.Matches) >= limit {
				res.Truncated = true
				return res, nil
			}
			res.Matches = append(res.Matches, &executorv1.SearchMatch{Path: p, Line: int32(i + 1), Text: l})
		}
	}
	return res, nil
}

// GitStatus answers from Git.
func (s *Server) GitStatus(_ context.Context, req *executorv1.GitStatusRequest) (*executorv1.GitStatusResponse, error) {
	s.record("GitStatus", "", req.GetJobId())
	if s.git == nil {
		return &executorv1.GitStatusResponse{NotARepository: true}, nil
	}
	return &executorv1.GitStatusResponse{Branch: s.git.Branch, Entries: s.git.Status}, nil
}

// GitLog answers from Git.
func (s *Server) GitLog(_ context.Context, req *executorv1.GitLogRequest) (*executorv1.GitLogResponse, error) {
	s.record("GitLog", req.GetPath(), req.GetJobId())
	if s.git == nil {
		return &executorv1.GitLogResponse{NotARepository: true}, nil
	}
	commits := s.git.Commits
	if n := int(req.GetMaxCommits()); n > 0 && len(commits) > n {
		commits = commits[:n]
	}
	return &executorv1.GitLogResponse{Commits: commits}, nil
}

// DiffSummary answers from Git.
func (s *Server) DiffSummary(_ context.Context, req *executorv1.DiffSummaryRequest) (*executorv1.DiffSummaryResponse, error) {
	s.record("DiffSummary", "", req.GetJobId())
	if s.git == nil {
		return &executorv1.DiffSummaryResponse{NotARepository: true}, nil
	}
	return &executorv1.DiffSummaryResponse{Files: s.git.Diff}, nil
}

// Remotes answers from Git.
func (s *Server) Remotes(_ context.Context, req *executorv1.RemotesRequest) (*executorv1.RemotesResponse, error) {
	s.record("Remotes", "", req.GetJobId())
	res := &executorv1.RemotesResponse{NotARepository: s.git == nil}
	if s.git != nil {
		names := make([]string, 0, len(s.git.Remotes))
		for n := range s.git.Remotes {
			names = append(names, n)
		}
		sort.Strings(names)
		for _, n := range names {
			res.Remotes = append(res.Remotes, &executorv1.Remote{Name: n, Url: s.git.Remotes[n]})
		}
	}
	return res, nil
}

var _ executorv1connect.WorkspaceServiceHandler = (*Server)(nil)
