// Package workspace is the executor's read-only view of the workspace as the coders
// (coder-order) and the worker (router-shiro) use it: a client over the executor's
// WorkspaceService, and the read-only tools a model may call through it (list_tree, read_file,
// search, git_status, git_log, diff_summary) for llm.RunTools. The executor decides what is
// shown: files holding secrets are refused or left out there, never here.
package workspace

import (
	"context"
	"errors"
	"fmt"

	"connectrpc.com/connect"

	executorv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/executor/v1"
	"github.com/picoclaw-suite/picoclaw/gen/picoclaw/executor/v1/executorv1connect"
	"github.com/picoclaw-suite/picoclaw/pkg/jobid"
)

// Errors of the view; a model reads them as tool results.
var (
	// ErrNotFound: there is no such file.
	ErrNotFound = errors.New("no such file")
	// ErrRefused: the view will not show the file (it holds secrets, is binary or too large),
	// or the request itself is not acceptable.
	ErrRefused = errors.New("not shown")
)

// Client calls the executor's WorkspaceService; every call carries the job id of its context.
type Client struct {
	c executorv1connect.WorkspaceServiceClient
}

// New returns the client over c (built with the caller's service identity).
func New(c executorv1connect.WorkspaceServiceClient) *Client { return &Client{c: c} }

// ListTree lists the files (directories left out) of the whole workspace, at most maxEntries.
func (c *Client) ListTree(ctx context.Context, maxEntries int) ([]string, bool, error) {
	res, err := c.c.ListTree(ctx, &executorv1.ListTreeRequest{JobId: jobid.FromContext(ctx), MaxEntries: int32(maxEntries), MaxDepth: 64})
	if err != nil {
		return nil, false, viewError("", err)
	}
	var out []string
	for _, e := range res.GetEntries() {
		if !e.GetDir() {
			out = append(out, e.GetPath())
		}
	}
	return out, res.GetTruncated(), nil
}

// Survey lists the tree (at most maxEntries files) and searches it for the regular expression
// expr (at most maxMatches, one path per matching line) in one walk of the executor's view; a
// view that does not search along (an older executor) is asked separately.
func (c *Client) Survey(ctx context.Context, maxEntries int, expr string, maxMatches int) (files []string, truncated bool, hits []string, err error) {
	res, err := c.c.ListTree(ctx, &executorv1.ListTreeRequest{JobId: jobid.FromContext(ctx), MaxEntries: int32(maxEntries), MaxDepth: 64,
		Search: &executorv1.SearchRequest{Query: expr, Regexp: true, MaxMatches: int32(maxMatches)}})
	if err != nil {
		return nil, false, nil, viewError("", err)
	}
	for _, e := range res.GetEntries() {
		if !e.GetDir() {
			files = append(files, e.GetPath())
		}
	}
	if res.GetSearch() == nil {
		hits, err = c.Search(ctx, expr, maxMatches)
		return files, res.GetTruncated(), hits, err
	}
	for _, m := range res.GetSearch().GetMatches() {
		hits = append(hits, m.GetPath())
	}
	return files, res.GetTruncated(), hits, nil
}

// ReadFile reads a text file: its content (at most maxBytes), the sha256 of the whole file and
// whether the content was cut. Missing files wrap ErrNotFound; withheld, binary and too large
// ones ErrRefused.
func (c *Client) ReadFile(ctx context.Context, name string, maxBytes int) (string, string, bool, error) {
	res, err := c.read(ctx, &executorv1.ReadFileRequest{Path: name, MaxBytes: int64(maxBytes)})
	if err != nil {
		return "", "", false, err
	}
	return res.GetContent(), res.GetSha256(), res.GetTruncated(), nil
}

func (c *Client) read(ctx context.Context, req *executorv1.ReadFileRequest) (*executorv1.ReadFileResponse, error) {
	req.JobId = jobid.FromContext(ctx)
	res, err := c.c.ReadFile(ctx, req)
	if err != nil {
		return nil, viewError(req.GetPath(), err)
	}
	if res.GetBinary() {
		return nil, fmt.Errorf("%s: %w: a binary file", req.GetPath(), ErrRefused)
	}
	return res, nil
}

// Search returns the path of every line matching the regular expression expr, at most
// maxMatches.
func (c *Client) Search(ctx context.Context, expr string, maxMatches int) ([]string, error) {
	res, err := c.c.Search(ctx, &executorv1.SearchRequest{JobId: jobid.FromContext(ctx), Query: expr, Regexp: true, MaxMatches: int32(maxMatches)})
	if err != nil {
		return nil, viewError("", err)
	}
	out := make([]string, len(res.GetMatches()))
	for i, m := range res.GetMatches() {
		out[i] = m.GetPath()
	}
	return out, nil
}

// Remotes maps the repository's git remote names to their URLs (credentials removed).
func (c *Client) Remotes(ctx context.Context) (map[string]string, error) {
	res, err := c.c.Remotes(ctx, &executorv1.RemotesRequest{JobId: jobid.FromContext(ctx)})
	if err != nil {
		return nil, viewError("", err)
	}
	out := make(map[string]string, len(res.GetRemotes()))
	for _, r := range res.GetRemotes() {
		out[r.GetName()] = r.GetUrl()
	}
	return out, nil
}

// viewError maps the view's refusals to ErrNotFound and ErrRefused, keeping its message;
// other errors (the executor unreachable, a deadline) pass unchanged.
func viewError(name string, err error) error {
	var ce *connect.Error
	if !errors.As(err, &ce) {
		return err
	}
	prefix := ""
	if name != "" {
		prefix = name + ": "
	}
	switch ce.Code() {
	case connect.CodeNotFound:
		return fmt.Errorf("%s%w", prefix, ErrNotFound)
	case connect.CodePermissionDenied, connect.CodeInvalidArgument, connect.CodeFailedPrecondition, connect.CodeResourceExhausted:
		return fmt.Errorf("%s%w: %s", prefix, ErrRefused, ce.Message())
	}
	return err
}
