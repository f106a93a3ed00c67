package app

import (
	"context"
	"strings"
	"testing"
)

// With deliberation.enabled false, /deliberate is refused with the way out and no order is asked.
func TestDeliberationSwitchedOff(t *testing.T) {
	cfg := testConfig()
	cfg.DeliberationEnabled = false
	h := newHarness(t, cfg)
	res, err := h.router.ProcessTask(context.Background(), Input{JobID: "job_20260301_090", Text: "/deliberate 認証を作り直す"})
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(res.Refusal, "deliberation.enabled") || h.coder.calls() != 0 {
		t.Fatalf("refusal %q, coder calls %d", res.Refusal, h.coder.calls())
	}
}
