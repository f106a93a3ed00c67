// Package browser runs browser operations through the MCP Chrome bridge (streamable HTTP).
package browser

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/picoclaw-suite/picoclaw/pkg/patch"
	"github.com/picoclaw-suite/picoclaw/services/executor/internal/domain"
)

// isTool reports whether action is one of the bridge tools the executor calls.
func isTool(action string) bool {
	switch action {
	case patch.ActionChromeNavigate, patch.ActionChromeClick, patch.ActionChromeGetText,
		patch.ActionChromeScreenshot, patch.ActionChromeExecuteScript:
		return true
	}
	return false
}

// Client is one job's connection to the bridge, opened on the first browser operation.
type Client struct {
	url     string
	http    *http.Client
	timeout time.Duration
	version string
	session *mcp.ClientSession
}

// New returns a client for the bridge at url; timeout bounds connecting and each call.
func New(url string, httpClient *http.Client, timeout time.Duration, version string) *Client {
	if httpClient == nil {
		httpClient = &http.Client{}
	}
	return &Client{url: url, http: httpClient, timeout: timeout, version: version}
}

// Args maps an operation to the tool's arguments: the target is the URL (navigate), the CSS
// selector (click, get_text, screenshot), the script is the content; metadata adds the rest.
func Args(op patch.Operation) (map[string]any, error) {
	if !isTool(op.Action) {
		return nil, fmt.Errorf("%w: unknown browser action %q", domain.ErrInvalid, op.Action)
	}
	args := map[string]any{}
	for k, v := range op.Metadata {
		args[k] = v
	}
	switch op.Action {
	case patch.ActionChromeNavigate:
		if op.Target == "" {
			return nil, fmt.Errorf("%w: chrome_navigate needs a URL", domain.ErrInvalid)
		}
		args["url"] = op.Target
	case patch.ActionChromeClick:
		if op.Target == "" {
			return nil, fmt.Errorf("%w: chrome_click needs a selector", domain.ErrInvalid)
		}
		args["selector"] = op.Target
	case patch.ActionChromeGetText, patch.ActionChromeScreenshot:
		if op.Target != "" {
			args["selector"] = op.Target
		}
	case patch.ActionChromeExecuteScript:
		script := op.Content
		if script == "" {
			script = op.Target
		}
		if script == "" {
			return nil, fmt.Errorf("%w: chrome_execute_script needs a script", domain.ErrInvalid)
		}
		args["script"] = script
	}
	return args, nil
}

// Call runs one browser operation and returns the tool's text output.
func (c *Client) Call(ctx context.Context, op patch.Operation) (string, error) {
	args, err := Args(op)
	if err != nil {
		return "", err
	}
	if c.url == "" {
		return "", fmt.Errorf("%w: no MCP Chrome bridge configured (executor.mcp.chrome_bridge_url)", domain.ErrUnavailable)
	}
	if c.timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, c.timeout)
		defer cancel()
	}
	if c.session == nil {
		client := mcp.NewClient(&mcp.Implementation{Name: "picoclaw-executor", Version: c.version}, nil)
		s, err := client.Connect(ctx, &mcp.StreamableClientTransport{
			Endpoint: c.url, HTTPClient: c.http, MaxRetries: -1, DisableStandaloneSSE: true,
		}, nil)
		if err != nil {
			return "", fmt.Errorf("%w: MCP Chrome bridge at %s is unreachable: %v", domain.ErrUnavailable, c.url, err)
		}
		c.session = s
	}
	res, err := c.session.CallTool(ctx, &mcp.CallToolParams{Name: op.Action, Arguments: args})
	if err != nil {
		return "", fmt.Errorf("%w: %s via MCP Chrome bridge: %v", domain.ErrUnavailable, op.Action, err)
	}
	text := render(res)
	if res.IsError {
		if text == "" {
			text = "tool reported an error"
		}
		return "", fmt.Errorf("%s: %s", op.Action, text)
	}
	return text, nil
}

func render(res *mcp.CallToolResult) string {
	var parts []string
	for _, c := range res.Content {
		switch v := c.(type) {
		case *mcp.TextContent:
			parts = append(parts, v.Text)
		case *mcp.ImageContent:
			parts = append(parts, fmt.Sprintf("[image %s, %d bytes]", v.MIMEType, len(v.Data)))
		default:
			if b, err := json.Marshal(v); err == nil {
				parts = append(parts, string(b))
			}
		}
	}
	if len(parts) == 0 && res.StructuredContent != nil {
		if b, err := json.Marshal(res.StructuredContent); err == nil {
			parts = append(parts, string(b))
		}
	}
	return strings.Join(parts, "\n")
}

// Close ends the session, if one was opened.
func (c *Client) Close() error {
	if c.session == nil {
		return nil
	}
	err := c.session.Close()
	c.session = nil
	return err
}
