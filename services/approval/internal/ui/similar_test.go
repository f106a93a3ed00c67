package ui_test

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/chromedp/chromedp"
)

// TestConsoleApproveSimilar: the console's "approve and allow similar" approves the job and
// switches on a grant scoped from it, which the console then shows.
func TestConsoleApproveSimilar(t *testing.T) {
	s := startApproval(t, map[string]string{"PICOCLAW_APPROVAL_AUTO_APPROVE_ENABLED": "true"})
	ctx := browser(t)
	id := jobID(131)
	s.request(t, id, "Update the install guide", "Replace the installer step.", unifiedDiff)

	var scope string
	err := chromedp.Do(ctx,
		login(s.base),
		chromedp.WaitVisible(chromedp.CSS(row(id))),
		chromedp.Click(chromedp.CSS(row(id)+" a.job-link")),
		chromedp.WaitVisible(chromedp.CSS("#similar-btn")),
		chromedp.Click(chromedp.CSS("#similar-btn")),
		chromedp.WaitVisible(chromedp.CSS(`#events tr[data-event-type="granted"]`)),
		// The list view shows the grant it made.
		chromedp.Navigate(s.base+"/ui/#/"),
		chromedp.WaitVisible(chromedp.CSS("#aa-scope")),
		into(&scope, chromedp.Text(chromedp.CSS("#aa-scope"))),
	)
	if err != nil {
		t.Fatalf("browser: %v", err)
	}
	if !strings.Contains(scope, "docs") {
		t.Errorf("grant scope lacks the job's directory:\n%s", scope)
	}
	req, err := http.NewRequestWithContext(context.Background(), http.MethodGet, s.base+"/v1/auto-approve", nil)
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Authorization", "Bearer "+approverToken)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var st struct {
		Active bool `json:"active"`
		Grant  struct {
			SimilarTo string `json:"similar_to"`
		} `json:"grant"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&st); err != nil || !st.Active || st.Grant.SimilarTo != id {
		t.Errorf("grant after approve similar: %+v %v", st, err)
	}
}
