package app_test

import (
	"strings"
	"testing"
)

// A worker route whose worker gave nothing usable still ends with an answer the user can act
// on, never the route declaration alone.
func TestWorkerWithoutResultIsToldSo(t *testing.T) {
	e := newEnv(t)
	got := text(e.send(t, approver, "/analyze ログの傾向を調べて"))
	mustContain(t, got, "使える結果が返りませんでした")
	if strings.TrimSpace(got) == "" {
		t.Fatal("empty reply")
	}
}
