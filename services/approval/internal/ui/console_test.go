package ui_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/chromedp/chromedp"

	approvalv1 "github.com/picoclaw-suite/picoclaw/gen/picoclaw/approval/v1"
	"github.com/picoclaw-suite/picoclaw/services/approval/approvaltest"
)

const unifiedDiff = `diff --git a/docs/guide.md b/docs/guide.md
--- a/docs/guide.md
+++ b/docs/guide.md
@@ -1,3 +1,4 @@
 # Guide
-Run the old installer.
+Run the new installer.
+Then restart the service.
 End.
`

const shellCommands = `[{"type":"file_edit","action":"update","target":"cmd/main.go","content":"package main\n\nfunc main() {}\n"},
{"type":"shell_command","action":"run","target":"go test ./..."}]`

func jobID(n int) string { return fmt.Sprintf("job_%s_%03d", time.Now().UTC().Format("20060102"), n) }

func row(id string) string { return `#jobs tr[data-job-id="` + id + `"]` }

// TestConsoleDenyAndApprove is the approver's path through the console: log in, see both pending
// jobs, deny one with a reason, approve the other, and find both decisions in the audit trail.
func TestConsoleDenyAndApprove(t *testing.T) {
	s := startApproval(t, nil)
	ctx := browser(t)
	dir := artifactsDir(t)
	denyID, approveID := jobID(101), jobID(102)
	s.request(t, denyID, "Update the install guide", "1. Replace the installer step.\n2. Mention the restart.", unifiedDiff)
	s.request(t, approveID, "Add main and run the tests", "Create cmd/main.go, then run go test.", shellCommands)
	const reason = "Please keep the old installer documented"

	var (
		deniedDetail, jobHeading, listText string
		jaHeader, enHeader                 string
		buttonsAfterDeny                   bool
		chainDenied, chainGranted          chromedp.AttributeResult
		addLines, delLines, flaggedOps     int
		fileLines                          int
	)
	err := chromedp.Do(ctx,
		login(s.base),
		chromedp.WaitVisible(chromedp.CSS(row(denyID))),
		into(&jaHeader, chromedp.Text(chromedp.CSS("#jobs th"))),
		// Japanese is the default; the screenshots are taken in English, which needs no CJK fonts.
		chromedp.Click(chromedp.CSS("#lang-btn")),
		chromedp.WaitVisible(chromedp.CSS(row(approveID))),
		chromedp.Sleep(1100*time.Millisecond), // one countdown tick
		into(&enHeader, chromedp.Text(chromedp.CSS("#jobs th"))),
		into(&listText, chromedp.Text(chromedp.CSS("#jobs tbody"))),
		screenshot(t, dir, "console-pending-list.png"),

		chromedp.Click(chromedp.CSS(row(denyID)+" a.job-link")),
		chromedp.WaitVisible(chromedp.CSS("#approve-btn")),
		chromedp.WaitVisible(chromedp.CSS("#diff .line.add")),
		into(&jobHeading, chromedp.Text(chromedp.CSS("#job-id"))),
		into(&addLines, chromedp.Evaluate[int](`document.querySelectorAll('#diff .line.add').length`)),
		into(&delLines, chromedp.Evaluate[int](`document.querySelectorAll('#diff .line.del').length`)),
		into(&fileLines, chromedp.Evaluate[int](`document.querySelectorAll('#diff .line.file').length`)),
		screenshot(t, dir, "console-job-page.png"),
		chromedp.SendKeys(chromedp.CSS("#deny-reason"), reason),
		chromedp.Click(chromedp.CSS("#deny-btn")),
		chromedp.WaitVisible(chromedp.CSS(`#events tr[data-event-type="denied"]`)),
		into(&deniedDetail, chromedp.Text(chromedp.CSS(`#events tr[data-event-type="denied"] .detail`))),
		into(&chainDenied, chromedp.AttributeValue(chromedp.CSS("#chain-status"), "data-valid")),
		into(&buttonsAfterDeny, chromedp.Evaluate[bool](`document.querySelector('#decision').offsetParent !== null`)),
		screenshot(t, dir, "console-job-denied.png"),

		chromedp.Click(chromedp.CSS("#back-link")),
		// The denied job leaves the pending list; the other one stays.
		chromedp.WaitNotPresent(chromedp.CSS(row(denyID))),
		chromedp.WaitVisible(chromedp.CSS(row(approveID))),
		chromedp.Click(chromedp.CSS(row(approveID)+" a.job-link")),
		chromedp.WaitVisible(chromedp.CSS("#approve-btn")),
		into(&flaggedOps, chromedp.Evaluate[int](`document.querySelectorAll('#ops tr.flagged').length`)),
		chromedp.Click(chromedp.CSS("#approve-btn")),
		chromedp.WaitVisible(chromedp.CSS(`#events tr[data-event-type="granted"]`)),
		into(&chainGranted, chromedp.AttributeValue(chromedp.CSS("#chain-status"), "data-valid")),
		screenshot(t, dir, "console-job-approved.png"),

		// Back on the denied job, its trail still shows the denial with the reason.
		chromedp.Navigate(s.base+"/ui/#/jobs/"+denyID),
		chromedp.WaitVisible(chromedp.CSS(`#events tr[data-event-type="denied"]`)),
	)
	if err != nil {
		t.Fatalf("browser: %v", err)
	}
	for _, want := range []string{denyID, approveID, "CODE1", "Update the install guide", "medium", "API change", "docs/guide.md"} {
		if !strings.Contains(listText, want) {
			t.Errorf("pending list lacks %q:\n%s", want, listText)
		}
	}
	if !strings.Contains(listText, ":") {
		t.Errorf("pending list shows no expiry countdown:\n%s", listText)
	}
	if jaHeader != "ジョブ ID" || enHeader != "Job ID" {
		t.Errorf("column header = %q in ja and %q in en", jaHeader, enHeader)
	}
	if buttonsAfterDeny {
		t.Error("approve and deny stay offered after the job was denied")
	}
	if jobHeading != denyID {
		t.Errorf("job page heading = %q, want %q", jobHeading, denyID)
	}
	if addLines != 2 || delLines != 1 || fileLines != 3 {
		t.Errorf("diff rendered %d added, %d deleted and %d file header lines, want 2, 1 and 3", addLines, delLines, fileLines)
	}
	if !strings.Contains(deniedDetail, reason) {
		t.Errorf("denied event detail = %q, want the reason", deniedDetail)
	}
	if chainDenied.Value != "true" || chainGranted.Value != "true" {
		t.Errorf("hash chain status = %q / %q, want true", chainDenied.Value, chainGranted.Value)
	}
	if flaggedOps != 1 {
		t.Errorf("flagged operations = %d, want 1 (the shell command)", flaggedOps)
	}

	// The decisions are the service's, not just the page's.
	for id, want := range map[string]approvalv1.JobStatus{denyID: approvalv1.JobStatus_JOB_STATUS_DENIED, approveID: approvalv1.JobStatus_JOB_STATUS_GRANTED} {
		res, err := s.client.GetJob(context.Background(), &approvalv1.GetJobRequest{JobId: id})
		if err != nil {
			t.Fatal(err)
		}
		if res.GetJob().GetStatus() != want {
			t.Errorf("%s status = %v, want %v", id, res.GetJob().GetStatus(), want)
		}
	}
}

// TestConsoleEscapesLLMText feeds markup through every LLM-written field and expects to read it
// back as text, with no element created and no script run.
func TestConsoleEscapesLLMText(t *testing.T) {
	s := startApproval(t, nil)
	ctx := browser(t)
	id := jobID(201)
	const (
		plan    = `Step 1 <img src=x onerror="window.__pwned=1;document.title='pwned'"> done`
		summary = `<b>bold</b><script>window.__pwned=2</script>`
	)
	patch := `[{"type":"file_edit","action":"create","target":"docs/x.md","content":"<img src=x onerror=\"window.__pwned=3\">\n"}]`
	s.request(t, id, summary, plan, patch)

	var (
		summaryCell, planText, title string
		loginError                   string
		listMarkup, pageMarkup       int
		pwned                        bool
	)
	err := chromedp.Do(ctx,
		// A token that names no approver is refused on the login form.
		chromedp.Navigate(s.base+"/ui/"),
		chromedp.WaitVisible(chromedp.CSS("#token")),
		chromedp.SendKeys(chromedp.CSS("#token"), "not-an-approver-token-000"),
		chromedp.Click(chromedp.CSS("#login-btn")),
		chromedp.WaitVisible(chromedp.CSS("#login-error")),
		into(&loginError, chromedp.Text(chromedp.CSS("#login-error"))),
		login(s.base),
		chromedp.WaitVisible(chromedp.CSS(row(id))),
		into(&summaryCell, chromedp.Text(chromedp.CSS(row(id)+" .summary"))),
		into(&listMarkup, chromedp.Evaluate[int](`document.querySelectorAll('#jobs img, #jobs b, #jobs script').length`)),
		chromedp.Click(chromedp.CSS(row(id)+" a.job-link")),
		chromedp.WaitVisible(chromedp.CSS("#diff .line.add")),
		into(&planText, chromedp.Text(chromedp.CSS("#plan"))),
		into(&pageMarkup, chromedp.Evaluate[int](`document.querySelectorAll('main img, main b, main script').length`)),
		chromedp.Sleep(200*time.Millisecond), // time for an injected handler to fire, were there one
		into(&pwned, chromedp.Evaluate[bool](`window.__pwned !== undefined`)),
		into(&title, chromedp.Title()),
	)
	if err != nil {
		t.Fatalf("browser: %v", err)
	}
	if loginError != "このトークンは承認者のものではありません。" {
		t.Errorf("login error for an unknown token = %q", loginError)
	}
	if summaryCell != summary {
		t.Errorf("summary cell = %q, want the markup as text %q", summaryCell, summary)
	}
	if planText != plan {
		t.Errorf("plan = %q, want the markup as text %q", planText, plan)
	}
	if listMarkup != 0 || pageMarkup != 0 {
		t.Errorf("LLM text created elements: %d in the list, %d on the job page", listMarkup, pageMarkup)
	}
	if pwned || title == "pwned" {
		t.Error("injected script ran")
	}
}

// TestConsoleAutoApproveOff shows the active grant with its scope and remaining time, and
// switches it off from the console.
func TestConsoleAutoApproveOff(t *testing.T) {
	s := startApproval(t, map[string]string{"PICOCLAW_APPROVAL_AUTO_APPROVE_ENABLED": "true"})
	ctx := browser(t)
	dir := artifactsDir(t)
	approvaltest.REST(t, approverToken, http.MethodPut, s.base+"/v1/auto-approve",
		`{"ttl":"45m","routes":["CODE1"],"path_prefixes":["docs/"],"reason":"docs sprint"}`)

	var scope, remaining, statusOff string
	err := chromedp.Do(ctx,
		login(s.base),
		chromedp.WaitVisible(chromedp.CSS("#aa-remaining")),
		chromedp.Click(chromedp.CSS("#lang-btn")),
		chromedp.WaitVisible(chromedp.CSS("#aa-off-btn")),
		chromedp.Sleep(1100*time.Millisecond), // one countdown tick
		into(&scope, chromedp.Text(chromedp.CSS("#aa-scope"))),
		into(&remaining, chromedp.Text(chromedp.CSS("#aa-remaining"))),
		screenshot(t, dir, "console-auto-approve.png"),
		chromedp.Click(chromedp.CSS("#aa-off-btn")),
		chromedp.WaitNotVisible(chromedp.CSS("#aa-scope")),
		chromedp.WaitVisible(chromedp.CSS("#aa-on-btn")),
		into(&statusOff, chromedp.Text(chromedp.CSS("#aa-status"))),
	)
	if err != nil {
		t.Fatalf("browser: %v", err)
	}
	for _, want := range []string{"CODE1", "docs", "docs sprint", "rest:alice"} {
		if !strings.Contains(scope, want) {
			t.Errorf("grant scope lacks %q:\n%s", want, scope)
		}
	}
	if !strings.HasPrefix(remaining, "44:") {
		t.Errorf("remaining time = %q, want 44:xx", remaining)
	}
	if !strings.Contains(statusOff, "OFF") {
		t.Errorf("status after switching off = %q", statusOff)
	}
	get, err := http.NewRequest(http.MethodGet, s.base+"/v1/auto-approve", nil)
	if err != nil {
		t.Fatal(err)
	}
	get.Header.Set("Authorization", "Bearer "+approverToken)
	resp, err := http.DefaultClient.Do(get)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var st struct {
		Active bool `json:"active"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil || st.Active {
		t.Errorf("grant after switching off: active=%v, %v", st.Active, err)
	}
}
