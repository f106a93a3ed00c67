package service

import (
	"context"
	"fmt"
	"log/slog"
	"strings"
	"time"

	"github.com/picoclaw-suite/picoclaw/pkg/config"
	"github.com/picoclaw-suite/picoclaw/services/executor/internal/browser"
)

// browserCheckTimeout bounds the start-up look at the bridge: a bridge that does not answer
// by then is checked no further.
const browserCheckTimeout = 5 * time.Second

// checkBrowserTools compares, at start, the tools the browser actions call with the ones the
// configured bridge serves (tools/list). Which tools a bridge has depends on its version, so
// they are checked against the bridge itself, not a list of ours:
//   - an override (executor.browser.tools.<key>) naming a tool the bridge does not serve is a
//     configuration error naming that key: the executor does not start;
//   - a tool of the default table the bridge lacks (another bridge version) is logged with the
//     key that would point the action elsewhere (executor.browser_tool_missing);
//   - a bridge that does not answer (Chrome or its extension not running yet) is logged
//     (executor.browser_tools_unchecked) and not waited for: a missing tool then fails the
//     operation that calls it, with the bridge's own error.
func checkBrowserTools(ctx context.Context, e Executor, log *slog.Logger) error {
	url := e.MCP.ChromeBridgeURL
	if url == "" {
		return nil
	}
	tools, err := browser.ResolveTools(e.Browser.Tools)
	if err != nil {
		return fmt.Errorf("executor.browser.tools: %w", err)
	}
	c := browser.New(browser.Config{URL: url, Timeout: min(e.MCP.Timeout, browserCheckTimeout), Version: Name, Tools: tools})
	defer func() { _ = c.Close() }()
	served, err := c.ListTools(ctx)
	if err != nil {
		log.WarnContext(ctx, "executor.browser_tools_unchecked", slog.String("bridge", url), slog.String("error", err.Error()))
		return nil
	}
	var errs config.Errors
	for _, m := range tools.Missing(served, e.Browser.Tools) {
		if m.Overridden {
			errs.Addf("executor.browser.tools."+m.Key, "the MCP Chrome bridge at %s has no tool %q (it serves: %s)",
				url, m.Tool, strings.Join(served, ", "))
			continue
		}
		log.WarnContext(ctx, "executor.browser_tool_missing", slog.String("bridge", url), slog.String("action", m.Key),
			slog.String("tool", m.Tool), slog.String("fix", "set executor.browser.tools."+m.Key+" to the bridge's tool for it"))
	}
	if err := errs.Err(); err != nil {
		return err
	}
	log.InfoContext(ctx, "executor.browser_tools_checked", slog.String("bridge", url), slog.Int("served", len(served)))
	return nil
}
