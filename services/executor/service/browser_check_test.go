package service

import (
	"context"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"

	"github.com/picoclaw-suite/picoclaw/pkg/testinfra"
	"github.com/picoclaw-suite/picoclaw/pkg/testinfra/fakemcp"
)

// checkConfig is an executor configuration for the start-up check, mutated by mutate.
func checkConfig(t *testing.T, mutate func(*Config)) (Config, *testinfra.SyncBuffer) {
	t.Helper()
	dir := t.TempDir()
	cfg := DefaultConfig()
	cfg.Auth = testinfra.Auth(Name)
	cfg.Listener = testinfra.Listen(t)
	cfg.Services.Approval.URL = "http://127.0.0.1:1"
	cfg.Executor.Workspace, cfg.Executor.StateDir = filepath.Join(dir, "ws"), filepath.Join(dir, "state")
	cfg.Executor.MCP.Timeout = 5 * time.Second
	cfg.HeartbeatSender.Enabled = false
	logs := &testinfra.SyncBuffer{}
	cfg.LogWriter = logs
	mutate(&cfg)
	return cfg, logs
}

// refused runs the executor with cfg and returns Run's error when it stops without serving;
// when it serves instead, it is stopped and refused returns nil.
func refused(t *testing.T, cfg Config) error {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	done := make(chan error, 1)
	go func() { done <- Run(ctx, cfg) }()
	// Before Run serves, the listener takes connections without answering them.
	hc := &http.Client{Timeout: time.Second}
	for {
		select {
		case err := <-done:
			return err
		default:
		}
		if res, err := hc.Get(testinfra.URL(cfg.Listener) + "/readyz"); err == nil {
			_ = res.Body.Close()
			if res.StatusCode == http.StatusOK {
				cancel()
				if err := <-done; err != nil {
					t.Errorf("run: %v", err)
				}
				return nil
			}
		}
	}
}

// serves starts the executor with cfg and returns once it is ready (the check is done by then).
func serves(t *testing.T, cfg Config) {
	t.Helper()
	testinfra.Serve(t, Name, testinfra.URL(cfg.Listener)+"/readyz", func(ctx context.Context) error { return Run(ctx, cfg) })
}

// An executor.browser.tools override naming a tool the bridge does not serve stops the start,
// naming the key; one it serves starts.
func TestBrowserToolOverrideTheBridgeLacksStopsTheStart(t *testing.T) {
	bridge, err := fakemcp.Start(fakemcp.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(bridge.Close)
	cfg, _ := checkConfig(t, func(c *Config) {
		c.Executor.MCP.ChromeBridgeURL = bridge.URL()
		c.Executor.Browser.Tools = map[string]string{"click": "chrome_click", "get_content": "chrome_get_web_content"}
	})
	err = refused(t, cfg)
	if err == nil || !strings.Contains(err.Error(), `executor.browser.tools.click: the MCP Chrome bridge at `+bridge.URL()+` has no tool "chrome_click"`) ||
		!strings.Contains(err.Error(), "chrome_click_element") || strings.Contains(err.Error(), "get_content") {
		t.Fatalf("err = %v", err)
	}
	cfg, logs := checkConfig(t, func(c *Config) {
		c.Executor.MCP.ChromeBridgeURL = bridge.URL()
		c.Executor.Browser.Tools = map[string]string{"get_content": "search_tabs_content"}
	})
	serves(t, cfg)
	if logs.Count("executor.browser_tools_checked") != 1 || logs.Count("executor.browser_tool_missing") != 0 {
		t.Fatalf("logs:\n%s", logs.String())
	}
	if calls := bridge.Calls(); len(calls) != 0 {
		t.Errorf("the check called tools: %v", calls)
	}
}

// A bridge of another version that lacks a tool of the default table starts the executor and
// says which key to set; a bridge that does not answer is not waited for.
func TestBrowserToolsTheBridgeLacksAreLogged(t *testing.T) {
	s := mcp.NewServer(&mcp.Implementation{Name: "older-bridge", Version: "0.9"}, nil)
	for _, name := range []string{"chrome_navigate", "chrome_screenshot", "chrome_click_element", "chrome_fill_or_select", "chrome_get_web_content"} {
		s.AddTool(&mcp.Tool{Name: name, InputSchema: map[string]any{"type": "object"}}, func(context.Context, *mcp.CallToolRequest) (*mcp.CallToolResult, error) {
			return fakemcp.Text("ok"), nil
		})
	}
	hs := httptest.NewServer(mcp.NewStreamableHTTPHandler(func(*http.Request) *mcp.Server { return s }, nil))
	t.Cleanup(hs.Close)
	cfg, logs := checkConfig(t, func(c *Config) { c.Executor.MCP.ChromeBridgeURL = hs.URL + "/mcp" })
	serves(t, cfg)
	ev := logs.Events("executor.browser_tool_missing")
	if len(ev) != 1 || ev[0]["action"] != "keyboard" || ev[0]["tool"] != "chrome_keyboard" || ev[0]["fix"] != "set executor.browser.tools.keyboard to the bridge's tool for it" {
		t.Fatalf("logged %v", ev)
	}

	dead := httptest.NewServer(http.NotFoundHandler())
	dead.Close()
	cfg, logs = checkConfig(t, func(c *Config) { c.Executor.MCP.ChromeBridgeURL = dead.URL + "/mcp" })
	serves(t, cfg)
	if logs.Count("executor.browser_tools_unchecked") != 1 {
		t.Fatalf("logs:\n%s", logs.String())
	}
}
