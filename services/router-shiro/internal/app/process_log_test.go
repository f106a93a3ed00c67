package app

import (
	"log/slog"
	"testing"

	"github.com/picoclaw-suite/picoclaw/services/router-shiro/internal/domain"
)

// A plain chat's final.route repeats its router.decision and is logged at debug; a turn that
// went further is logged at info.
func TestFinalRouteLevel(t *testing.T) {
	plain := func() Result { return Result{InitialRoute: domain.RouteChat, FinalRoute: domain.RouteChat} }
	cases := map[string]func(r *Result){
		"worker call":     func(r *Result) { r.WorkerCalls = 1 },
		"rerouted":        func(r *Result) { r.FinalRoute = domain.RouteCode },
		"classifier call": func(r *Result) { r.Classifier = &ClassifierTrace{} },
		"refusal":         func(r *Result) { r.Refusal = "no" },
		"error":           func(r *Result) { r.ErrorReason = "boom" },
		"deliberation":    func(r *Result) { r.Deliberation = true },
		"stop reason":     func(r *Result) { r.StopReason = domain.StopNeedUserConfirmation },
		"not chat":        func(r *Result) { r.InitialRoute, r.FinalRoute = domain.RouteCode, domain.RouteCode },
	}
	r := plain()
	if got := finalLevel(&r); got != slog.LevelDebug {
		t.Fatalf("plain chat: %v, want debug", got)
	}
	for name, change := range cases {
		r := plain()
		change(&r)
		if got := finalLevel(&r); got != slog.LevelInfo {
			t.Errorf("%s: %v, want info", name, got)
		}
	}
}
