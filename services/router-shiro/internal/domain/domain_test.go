package domain

import (
	"errors"
	"strings"
	"testing"
)

func TestParseCommand(t *testing.T) {
	// The zero Command stands for a text that is no command.
	for in, want := range map[string]Command{
		"/chat hi":          {Kind: CommandRoute, Route: RouteChat, Name: "/chat", Text: "hi"},
		"  /PLAN  旅行の計画":    {Kind: CommandRoute, Route: RoutePlan, Name: "/plan", Text: "旅行の計画"},
		"/code":             {Kind: CommandRoute, Route: RouteCode, Name: "/code", Text: ""},
		"/code2\nfix":       {Kind: CommandRoute, Route: RouteCode2, Name: "/code2", Text: "fix"},
		"/order1 x":         {Kind: CommandRoute, Route: RouteCode1, Name: "/order1", Text: "x"},
		"/coder3 x":         {Kind: CommandRoute, Route: RouteCode3, Name: "/coder3", Text: "x"},
		"／ops 再起動":          {Kind: CommandRoute, Route: RouteOps, Name: "/ops", Text: "再起動"},
		"/local":            {Kind: CommandLocal, Route: RouteChat, Name: "/local", Text: ""},
		"/cloud":            {Kind: CommandCloud, Route: RouteChat, Name: "/cloud", Text: ""},
		"/deliberate 設計":    {Kind: CommandDeliberate, Route: RouteCode, Name: "/deliberate", Text: "設計"},
		"/codex x":          {},
		"please /code this": {},
		"/approve job_1":    {},
		"":                  {},
	} {
		c, ok := ParseCommand(in)
		if ok != (want != Command{}) || c != want {
			t.Errorf("%q: got %+v %v", in, c, ok)
		}
	}
}

func TestParseClassifierAnswer(t *testing.T) {
	accepted := []struct {
		in    string
		route Route
		ev    int
	}{
		{`{"route":"ops","confidence":0.9,"reason":"r","evidence":["再起動"]}`, RouteOps, 1},
		{` {"route":"CHAT","confidence":0,"reason":"","evidence":"挨拶"} `, RouteChat, 1},
		{`{"route":"CHAT","confidence":1,"reason":"r","evidence":[" ",""],"extra":1}`, RouteChat, 0},
	}
	for _, tt := range accepted {
		if a, err := ParseClassifierAnswer(tt.in); err != nil || a.Route != tt.route || len(a.Evidence) != tt.ev {
			t.Errorf("%s: got %+v %v", tt.in, a, err)
		}
	}
	for in, failure := range map[string]ClassifierFailure{
		`not json`: ClassifierInvalidJSON,
		`[1,2]`:    ClassifierInvalidJSON,
		`null`:     ClassifierInvalidJSON,
		`{"route":"CHAT","confidence":0.9,"reason":"r","evidence":[]}{}`: ClassifierInvalidJSON,
		`{"confidence":0.9,"reason":"r","evidence":[]}`:                  ClassifierMissingField,
		`{"route":"CHAT","reason":"r","evidence":[]}`:                    ClassifierMissingField,
		`{"route":"CHAT","confidence":0.9,"evidence":[]}`:                ClassifierMissingField,
		`{"route":"CHAT","confidence":0.9,"reason":"r"}`:                 ClassifierMissingField,
		`{"route":null,"confidence":0.9,"reason":"r","evidence":[]}`:     ClassifierWrongType,
		`{"route":"CHAT","confidence":"0.9","reason":"r","evidence":[]}`: ClassifierWrongType,
		`{"route":"CHAT","confidence":0.9,"reason":"r","evidence":[1]}`:  ClassifierWrongType,
		`{"route":"CODE4","confidence":0.9,"reason":"r","evidence":[]}`:  ClassifierUnknownRoute,
		`{"route":"CHAT","confidence":1.5,"reason":"r","evidence":[]}`:   ClassifierOutOfRange,
		`{"route":"CHAT","confidence":-0.1,"reason":"r","evidence":[]}`:  ClassifierOutOfRange,
	} {
		_, err := ParseClassifierAnswer(in)
		var ce *ClassifierError
		if !errors.As(err, &ce) || ce.Failure != failure || !errors.Is(err, ErrInvalid) {
			t.Errorf("%s: err %v, want %s", in, err, failure)
		}
	}
}

func TestClassifierAccept(t *testing.T) {
	th := Thresholds{MinConfidence: 0.6, MinConfidenceForCode: 0.8}
	tests := []struct {
		a       ClassifierAnswer
		failure ClassifierFailure
	}{
		{ClassifierAnswer{Route: RoutePlan, Confidence: 0.6}, ""},
		{ClassifierAnswer{Route: RoutePlan, Confidence: 0.59}, ClassifierLowConfidence},
		{ClassifierAnswer{Route: RouteCode, Confidence: 0.79, Evidence: []string{"x"}}, ClassifierCodeLowConf},
		{ClassifierAnswer{Route: RouteCode3, Confidence: 0.8, Evidence: []string{"x"}}, ""},
		{ClassifierAnswer{Route: RouteCode1, Confidence: 0.95}, ClassifierCodeNoEvidence},
	}
	for _, tt := range tests {
		d, err := tt.a.Accept(th)
		var ce *ClassifierError
		if tt.failure == "" {
			if err != nil || d.Route != tt.a.Route || d.Source != SourceClassifier {
				t.Errorf("%+v: %+v %v", tt.a, d, err)
			}
		} else if !errors.As(err, &ce) || ce.Failure != tt.failure {
			t.Errorf("%+v: err %v, want %s", tt.a, err, tt.failure)
		}
	}
}

func TestParseWorkerOutput(t *testing.T) {
	valid := `{"result":"r","needs_next_loop":false,"why":"w","next_actions":["a"],"questions_for_user":[],"confidence":0.5,"risk":"Medium"`
	tests := []struct {
		in   string
		want string // error detail prefix, "" = valid
	}{
		{valid + `}`, ""},
		{valid + `,"fit":0.2,"suggested_route":"analyze"}`, ""},
		{valid + `,"fit":null,"suggested_route":""}`, ""},
		{`{"result":"r"`, "invalid_json"},
		{`{"result":"r","needs_next_loop":false,"why":"w","next_actions":[],"questions_for_user":[],"confidence":0.5}`, "missing_field: risk"},
		{`{"result":"r","needs_next_loop":"no","why":"w","next_actions":[],"questions_for_user":[],"confidence":0.5,"risk":"low"}`, "wrong_type: needs_next_loop"},
		{`{"result":"r","needs_next_loop":false,"why":"w","next_actions":["1","2","3","4"],"questions_for_user":[],"confidence":0.5,"risk":"low"}`, "too_many: next_actions"},
		{`{"result":"r","needs_next_loop":false,"why":"w","next_actions":[],"questions_for_user":[],"confidence":2,"risk":"low"}`, "out_of_range: confidence"},
		{`{"result":"r","needs_next_loop":false,"why":"w","next_actions":[],"questions_for_user":[],"confidence":0.5,"risk":"extreme"}`, "invalid_risk"},
		{valid + `,"fit":1.2}`, "out_of_range: fit"},
		{valid + `,"fit":"low"}`, "wrong_type: fit"},
		{valid + `,"suggested_route":"NOWHERE"}`, "unknown_route"},
	}
	for _, tt := range tests {
		o, err := ParseWorkerOutput(tt.in)
		if tt.want == "" {
			if err != nil || o.Risk != RiskMedium {
				t.Errorf("%s: %+v %v", tt.in, o, err)
			}
			continue
		}
		var we *WorkerError
		if !errors.As(err, &we) || !strings.HasPrefix(we.Detail, tt.want) {
			t.Errorf("%s: err %v, want %s", tt.in, err, tt.want)
		}
	}
	o, _ := ParseWorkerOutput(valid + `,"fit":0.2,"suggested_route":"analyze"}`)
	if o.Fit == nil || *o.Fit != 0.2 || o.SuggestedRoute != RouteAnalyze {
		t.Errorf("optional fields %+v", o)
	}
}

func TestSummarizePatch(t *testing.T) {
	tests := []struct {
		name, patch, paths string
		ops                int
	}{
		{"json commands", `[{"type":"file_edit","action":"update","target":"./docs/a.md"},{"type":"file_edit","action":"rename","target":"a.go","metadata":{"to":"b.go"}},{"type":"shell_command","action":"run","target":"go test ./..."}]`,
			"a.go,b.go,docs/a.md", 3},
		{"markdown fences", "説明\n```go:cmd/main.go\npackage main\n```\n```bash\nmake\n```\n```md:README.md\n# x\n```", "README.md,cmd/main.go", 3},
		{"git diff", "diff --git a/x.go b/x.go\n--- a/x.go\n+++ b/x.go\n@@ -1 +1 @@\n-a\n+b\ndiff --git a/y.go b/y.go\nnew file mode 100644\n--- /dev/null\n+++ b/y.go\n@@ -0,0 +1 @@\n+c\n", "x.go,y.go", 2},
		{"plain unified diff", "--- a/z.txt\n+++ b/z.txt\n@@ -1 +1 @@\n-a\n+b\n", "z.txt", 1},
		{"empty", "  ", "", 0},
	}
	for _, tt := range tests {
		s := SummarizePatch(tt.patch)
		if strings.Join(s.AffectedPaths, ",") != tt.paths || s.Operations != tt.ops || s.Error != "" {
			t.Errorf("%s: %+v", tt.name, s)
		}
	}
	if s := SummarizePatch(`[{"type":"file_edit","action":"delete","target":"old.txt"},{"type":"browser","action":"chrome_navigate","target":"https://example.com"}]`); !s.Destructive || !s.UsesBrowser {
		t.Errorf("flags not derived from the patch: %+v", s)
	}
	if s := SummarizePatch(`[{"type":"file_edit","action":"update","target":"../../etc/passwd"}]`); s.Error == "" {
		t.Errorf("escaping path accepted: %+v", s)
	}
}

func TestCompare(t *testing.T) {
	results := []ProposalResult{
		{Order: "order1", Proposal: &Proposal{Plan: "High risk", Patch: "```go:a.go\nx\n```", Risk: ProposalRisk{Level: RiskHigh}, Cost: CostHint{EstimatedCostUSD: 0.001}}},
		{Order: "order2", Proposal: &Proposal{Plan: "Low destructive", Patch: "```go:a.go\nx\n```", Risk: ProposalRisk{Level: RiskLow, Destructive: true}, Cost: CostHint{EstimatedCostUSD: 0.01}}},
		{Order: "order3", Proposal: &Proposal{Plan: "Low safe", Patch: "```go:b.go\nx\n```", Risk: ProposalRisk{Level: RiskLow}, Cost: CostHint{EstimatedCostUSD: 0.2}, UsesBrowser: true}},
		{Order: "order4", ErrorCode: "unauthenticated"},
		{Order: "order5", Proposal: &Proposal{Plan: "Broken", Patch: `[{"type":"teleport"}]`, Risk: ProposalRisk{Level: RiskLow}}},
	}
	c := Compare(results, "en")
	if c.Entries[4].PatchError == "" {
		t.Fatalf("unparsable patch not reported: %+v", c.Entries[4])
	}
	if c.Recommended != 3 || strings.Join(c.OverlappingPaths, ",") != "a.go" || len(c.Entries) != 5 || !c.Entries[2].UsesBrowser {
		t.Fatalf("%+v", c)
	}
	if !strings.Contains(c.Summary, "4 of 5 proposals") || !strings.Contains(c.Summary, "#3") {
		t.Fatalf("summary %q", c.Summary)
	}
	if none := Compare([]ProposalResult{{Order: "order1", ErrorCode: "timeout"}}, "ja"); none.Recommended != 0 || strings.Contains(none.Summary, "おすすめ") {
		t.Fatalf("all failed: %+v", none)
	}
}

func TestRouteOrder(t *testing.T) {
	for r, want := range map[Route]string{RouteCode: "order2", RouteCode1: "order1", RouteCode2: "order2", RouteCode3: "order3", RoutePlan: ""} {
		if got := r.Order("order2"); got != want {
			t.Errorf("%s: %q", r, got)
		}
	}
	if o, ok := NormalizeOrder(" Coder1 "); !ok || o != "order1" {
		t.Errorf("NormalizeOrder %q %v", o, ok)
	}
}
