// Package workspaceclient adapts the executor's WorkspaceService to app.Workspace.
package workspaceclient

import (
	"context"
	"errors"
	"fmt"

	"connectrpc.com/connect"

	executorv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/executor/v1"
	"github.com/picoclaw-suite/picoclaw/gen/picoclaw/executor/v1/executorv1connect"
	"github.com/picoclaw-suite/picoclaw/pkg/jobid"
	"github.com/picoclaw-suite/picoclaw/services/coder-order/internal/app"
)

// Client is app.Workspace over RPC.
type Client struct {
	c executorv1connect.WorkspaceServiceClient
}

// New returns the adapter.
func New(c executorv1connect.WorkspaceServiceClient) *Client { return &Client{c: c} }

var _ app.Workspace = (*Client)(nil)

// ListTree lists the files (directories left out) of the whole workspace.
func (c *Client) ListTree(ctx context.Context, maxEntries int) ([]string, bool, error) {
	res, err := c.c.ListTree(ctx, &executorv1.ListTreeRequest{JobId: jobid.FromContext(ctx), MaxEntries: int32(maxEntries), MaxDepth: 64})
	if err != nil {
		return nil, false, err
	}
	var out []string
	for _, e := range res.GetEntries() {
		if !e.GetDir() {
			out = append(out, e.GetPath())
		}
	}
	return out, res.GetTruncated(), nil
}

// ReadFile reads a text file; missing files wrap app.ErrFileNotFound, withheld and binary
// ones app.ErrFileRefused.
func (c *Client) ReadFile(ctx context.Context, name string, maxBytes int) (string, string, bool, error) {
	res, err := c.c.ReadFile(ctx, &executorv1.ReadFileRequest{JobId: jobid.FromContext(ctx), Path: name, MaxBytes: int64(maxBytes)})
	if err != nil {
		var ce *connect.Error
		if errors.As(err, &ce) {
			switch ce.Code() {
			case connect.CodeNotFound:
				return "", "", false, fmt.Errorf("%s: %w", name, app.ErrFileNotFound)
			case connect.CodePermissionDenied, connect.CodeInvalidArgument:
				return "", "", false, fmt.Errorf("%s: %w: %s", name, app.ErrFileRefused, ce.Message())
			}
		}
		return "", "", false, err
	}
	if res.GetBinary() {
		return "", res.GetSha256(), false, fmt.Errorf("%s: %w: binary", name, app.ErrFileRefused)
	}
	return res.GetContent(), res.GetSha256(), res.GetTruncated(), nil
}

// Search returns one path per matching line.
func (c *Client) Search(ctx context.Context, expr string, maxMatches int) ([]string, error) {
	res, err := c.c.Search(ctx, &executorv1.SearchRequest{JobId: jobid.FromContext(ctx), Query: expr, Regexp: true, MaxMatches: int32(maxMatches)})
	if err != nil {
		return nil, err
	}
	out := make([]string, len(res.GetMatches()))
	for i, m := range res.GetMatches() {
		out[i] = m.GetPath()
	}
	return out, nil
}

// Remotes maps remote names to URLs.
func (c *Client) Remotes(ctx context.Context) (map[string]string, error) {
	res, err := c.c.Remotes(ctx, &executorv1.RemotesRequest{JobId: jobid.FromContext(ctx)})
	if err != nil {
		return nil, err
	}
	out := make(map[string]string, len(res.GetRemotes()))
	for _, r := range res.GetRemotes() {
		out[r.GetName()] = r.GetUrl()
	}
	return out, nil
}
