// Package browser runs browser operations through the MCP Chrome bridge (hangwin/mcp-chrome,
// streamable HTTP). One table (tools.go) maps the patch's browser actions to the bridge's tools.
package browser

import (
	"context"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"net/http"
	"strconv"
	"strings"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/picoclaw-suite/picoclaw/pkg/patch"
	"github.com/picoclaw-suite/picoclaw/services/executor/internal/domain"
)

// MaxImageBytes bounds a screenshot the executor keeps.
const MaxImageBytes = 32 << 20

// Config configures a Client.
type Config struct {
	// URL is the bridge's streamable HTTP endpoint; empty = no browser.
	URL  string
	HTTP *http.Client
	// Timeout bounds connecting and each call.
	Timeout time.Duration
	Version string
	Tools   Tools
}

// Client is one job's connection to the bridge, opened on the first browser operation.
type Client struct {
	cfg     Config
	session *mcp.ClientSession
}

// Image is an image a tool returned.
type Image struct {
	MIMEType string
	Data     []byte
}

// Output is what one browser operation returned.
type Output struct {
	Text  string
	Image *Image
}

// New returns a client; cfg.Tools nil means the default table.
func New(cfg Config) *Client {
	if cfg.HTTP == nil {
		cfg.HTTP = &http.Client{}
	}
	if cfg.Tools == nil {
		cfg.Tools, _ = ResolveTools(nil)
	}
	return &Client{cfg: cfg}
}

// Plan maps op to the bridge tool and its arguments without calling anything.
func (c *Client) Plan(op patch.Operation) (string, map[string]any, error) {
	return c.cfg.Tools.Plan(op)
}

// Configured reports whether a bridge URL is set.
func (c *Client) Configured() bool { return c.cfg.URL != "" }

// Call runs one browser operation. A screenshot's image is returned in Output.Image.
func (c *Client) Call(ctx context.Context, op patch.Operation) (Output, error) {
	tool, args, err := c.Plan(op)
	if err != nil {
		return Output{}, err
	}
	ctx, cancel := c.bounded(ctx)
	defer cancel()
	res, err := c.call(ctx, tool, args)
	if err != nil {
		return Output{}, err
	}
	if res.IsError {
		// The bridge's own words are data: they are passed on as they are.
		text := render(res)
		if text == "" {
			return Output{}, domain.Fail(nil, domain.CodeBridgeCallFailed, tool)
		}
		return Output{}, domain.Fail(nil, domain.CodeBridgeToolError, tool, text)
	}
	if patch.CanonicalBrowserAction(op.Action) == patch.ActionChromeScreenshot {
		img, err := screenshot(res)
		if err != nil {
			return Output{}, err
		}
		return Output{Image: img}, nil
	}
	return Output{Text: render(res)}, nil
}

// ListTools lists the names of the tools the bridge serves (tools/list, every page).
func (c *Client) ListTools(ctx context.Context) ([]string, error) {
	ctx, cancel := c.bounded(ctx)
	defer cancel()
	if err := c.connect(ctx); err != nil {
		return nil, err
	}
	var names []string
	for tool, err := range c.session.Tools(ctx, nil) {
		if err != nil {
			return nil, fmt.Errorf("%w: listing the tools of the MCP Chrome bridge at %s: %v", domain.ErrUnavailable, c.cfg.URL, err)
		}
		names = append(names, tool.Name)
	}
	return names, nil
}

// bounded applies the configured timeout to ctx.
func (c *Client) bounded(ctx context.Context) (context.Context, context.CancelFunc) {
	if c.cfg.Timeout > 0 {
		return context.WithTimeout(ctx, c.cfg.Timeout)
	}
	return ctx, func() {}
}

// connect opens the session (initialize) on first use.
func (c *Client) connect(ctx context.Context) error {
	if c.cfg.URL == "" {
		return domain.Fail(domain.ErrUnavailable, domain.CodeBridgeNotConfigured)
	}
	if c.session != nil {
		return nil
	}
	client := mcp.NewClient(&mcp.Implementation{Name: "picoclaw-executor", Version: c.cfg.Version}, nil)
	s, err := client.Connect(ctx, &mcp.StreamableClientTransport{
		Endpoint: c.cfg.URL, HTTPClient: c.cfg.HTTP, MaxRetries: -1, DisableStandaloneSSE: true,
	}, nil)
	if err != nil {
		return domain.FailWith(domain.ErrUnavailable, err, domain.CodeBridgeUnreachable, c.cfg.URL)
	}
	c.session = s
	return nil
}

// call calls tool with args; a tool error is a result (IsError), not an error.
func (c *Client) call(ctx context.Context, tool string, args map[string]any) (*mcp.CallToolResult, error) {
	if err := c.connect(ctx); err != nil {
		return nil, err
	}
	res, err := c.session.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: args})
	if err != nil {
		return nil, domain.FailWith(domain.ErrUnavailable, err, domain.CodeBridgeCallFailed, tool)
	}
	return res, nil
}

// screenshot takes the image out of a chrome_screenshot result: an MCP image content, or the
// text {"base64Data": ..., "mimeType": ...} that bridge releases answer storeBase64 with.
func screenshot(res *mcp.CallToolResult) (*Image, error) {
	for _, c := range res.Content {
		switch v := c.(type) {
		case *mcp.ImageContent:
			return checkImage(&Image{MIMEType: v.MIMEType, Data: v.Data})
		case *mcp.TextContent:
			var t struct {
				Base64Data string `json:"base64Data"`
				MIMEType   string `json:"mimeType"`
			}
			if json.Unmarshal([]byte(v.Text), &t) != nil || t.Base64Data == "" {
				continue
			}
			if base64.StdEncoding.DecodedLen(len(t.Base64Data)) > MaxImageBytes {
				return nil, domain.Fail(nil, domain.CodeScreenshotTooLarge, MaxImageBytes)
			}
			data, err := base64.StdEncoding.DecodeString(t.Base64Data)
			if err != nil {
				return nil, domain.FailWith(nil, fmt.Errorf("not base64: %w", err), domain.CodeScreenshotBad)
			}
			return checkImage(&Image{MIMEType: t.MIMEType, Data: data})
		}
	}
	return nil, domain.Fail(nil, domain.CodeScreenshotMissing)
}

func checkImage(img *Image) (*Image, error) {
	switch {
	case len(img.Data) == 0:
		return nil, domain.Fail(nil, domain.CodeScreenshotMissing)
	case len(img.Data) > MaxImageBytes:
		return nil, domain.Fail(nil, domain.CodeScreenshotTooLarge, MaxImageBytes)
	case !strings.HasPrefix(img.MIMEType, "image/"):
		return nil, domain.Fail(nil, domain.CodeScreenshotType, strconv.Quote(img.MIMEType))
	}
	return img, nil
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
