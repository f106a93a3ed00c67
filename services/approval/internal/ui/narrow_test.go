package ui_test

import (
	"context"
	"strings"
	"testing"

	"github.com/chromedp/cdproto/emulation"
	"github.com/chromedp/chromedp"
)

// darkMode makes the page see the system's dark mode (prefers-color-scheme: dark).
func darkMode() chromedp.Action[chromedp.Void] {
	return chromedp.Func(func(ctx context.Context, _ *chromedp.Target) error {
		_, err := chromedp.Call(ctx, emulation.SetEmulatedMedia, emulation.SetEmulatedMediaParams{
			Features: []*emulation.MediaFeature{{Name: "prefers-color-scheme", Value: "dark"}}})
		return err
	})
}

// overflow is how far the page is wider than the window (0 when nothing overflows).
const overflow = `Math.max(document.documentElement.scrollWidth, document.body.scrollWidth) - window.innerWidth`

// At 360 px wide (a small phone) neither the job list nor a job's page is wider than the
// screen; the risk approval computed leads, with the coder's claim labelled beside it; in the
// system's dark mode the page is dark.
func TestConsoleAtPhoneWidthAndInDarkMode(t *testing.T) {
	s := startApproval(t, nil)
	ctx := browser(t)
	dir := artifactsDir(t)
	id := jobID(301)
	// A deletion needs a person by rule (hard_require.delete): approval computes high, while
	// the coder claims medium.
	s.request(t, id, "Remove the old guide and add main, with a rather long summary that has to wrap on a phone screen",
		"Delete docs/old.md, create cmd/main.go.",
		`[{"type":"file_edit","action":"delete","target":"docs/old-installation-guide-with-a-long-name.md"},`+
			`{"type":"file_edit","action":"create","target":"cmd/main.go","content":"package main\n\nfunc main() {}\n"}]`)

	var (
		listOverflow, jobOverflow int
		riskText, claimText       string
		metaText                  string
		lightBG, darkBG           string
	)
	err := chromedp.Do(ctx,
		chromedp.EmulateViewport(360, 740),
		chromedp.Navigate(s.base+"/ui/"),
		chromedp.WaitVisible(chromedp.CSS("#lang-btn")),
		chromedp.Click(chromedp.CSS("#lang-btn")),
		login(s.base),
		chromedp.WaitVisible(chromedp.CSS(row(id)+" .badge.risk")),
		into(&lightBG, chromedp.Evaluate[string](`getComputedStyle(document.body).backgroundColor`)),
		into(&listOverflow, chromedp.Evaluate[int](overflow)),
		into(&riskText, chromedp.Text(chromedp.CSS(row(id)+" .badge.risk"))),
		into(&claimText, chromedp.Text(chromedp.CSS(row(id)+" .claim"))),
		screenshot(t, dir, "console-360px-list.png"),
		chromedp.Click(chromedp.CSS(row(id)+" a.job-link")),
		chromedp.WaitVisible(chromedp.CSS("#diff .line")),
		into(&jobOverflow, chromedp.Evaluate[int](overflow)),
		into(&metaText, chromedp.Text(chromedp.CSS("#job-meta"))),
		screenshot(t, dir, "console-360px-job.png"),
		darkMode(),
		into(&darkBG, chromedp.Evaluate[string](`getComputedStyle(document.body).backgroundColor`)),
		screenshot(t, dir, "console-360px-job-dark.png"),
	)
	if err != nil {
		t.Fatal(err)
	}
	if listOverflow > 0 || jobOverflow > 0 {
		t.Errorf("wider than a 360 px screen: list by %d px, job page by %d px", listOverflow, jobOverflow)
	}
	if riskText != "high" || !strings.Contains(claimText, "coder claims: medium") {
		t.Errorf("risk cell %q, claim %q", riskText, claimText)
	}
	if !strings.Contains(metaText, "high (computed by approval)") || !strings.Contains(metaText, "Coder's claim") {
		t.Errorf("job meta lacks the computed risk and the labelled claim:\n%s", metaText)
	}
	if lightBG == darkBG || !strings.HasPrefix(darkBG, "rgb(11, 15, 23)") {
		t.Errorf("dark mode: background %q (light %q)", darkBG, lightBG)
	}
}
