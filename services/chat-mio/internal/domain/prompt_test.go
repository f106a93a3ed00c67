package domain

import (
	"go/ast"
	"go/parser"
	"go/token"
	"strings"
	"testing"
)

func TestSystemPromptOrder(t *testing.T) {
	for _, l := range []Locale{JA, EN} {
		got := SystemPrompt("PERSONA-TEXT", DefaultPolicy(l), Overlay{Locale: l, JobID: "job_20260101_001", Route: "PLAN",
			WorkerResult: "WORKER-RESULT", Questions: []string{"Q1"}, Pending: []string{"job_20260101_000"}})
		p, pol, ov := strings.Index(got, "PERSONA-TEXT"), strings.Index(got, DefaultPolicy(l)), strings.Index(got, "job_20260101_001")
		if p != 0 || pol <= p || ov <= pol {
			t.Fatalf("%s: order persona=%d policy=%d overlay=%d:\n%s", l, p, pol, ov, got)
		}
		for _, w := range []string{"WORKER-RESULT", "Q1", "job_20260101_000", "PLAN"} {
			if !strings.Contains(got, w) {
				t.Errorf("%s: prompt lacks %q", l, w)
			}
		}
	}
	if got := SystemPrompt("", "POLICY", Overlay{Locale: JA}); !strings.HasPrefix(got, "POLICY") {
		t.Fatalf("empty persona: %q", got)
	}
}

func TestDeclaration(t *testing.T) {
	tests := []struct {
		l                  Locale
		route, prev, order string
		delib              bool
		want               string
	}{
		{JA, "CHAT", "PLAN", "", false, ""},
		{JA, "PLAN", "PLAN", "", false, ""},
		{JA, "PLAN", "CHAT", "", false, "【Shiro が PLAN として担当します】"},
		{EN, "OPS", "", "", false, "[Shiro handles this as OPS]"},
		{JA, "CODE", "CHAT", "order2", false, "【Ao（order2）が提案を担当します】"},
		{JA, "CODE3", "", "", false, "【Gin（order3）が提案を担当します】"},
		{EN, "CODE1", "CHAT", "order1", false, "[Aka (order1) is writing the proposal]"},
		{JA, "", "CHAT", "", false, ""},
		{JA, "CODE", "CHAT", "", false, "【コーダーが提案を担当します】"},
		{JA, "CODE", "CODE", "", true, "【合議: 複数のコーダーが提案しました】"},
		{EN, "CODE", "", "", true, "[Deliberation: several coders proposed]"},
	}
	for _, tt := range tests {
		if got := Declaration(tt.l, tt.route, tt.prev, tt.order, tt.delib); got != tt.want {
			t.Errorf("Declaration(%s,%s,%s,%s) = %q, want %q", tt.l, tt.route, tt.prev, tt.order, got, tt.want)
		}
	}
}

func TestMessagesExistInBothLocales(t *testing.T) {
	for key, pair := range catalog {
		if pair[0] == "" || pair[1] == "" || pair[0] == pair[1] && key != MsgUsageAuto {
			t.Errorf("%s: ja %q en %q", key, pair[0], pair[1])
		}
	}
	if got := T(EN, MsgPickNotFound, "job_20260101_001", 3); got != "Option 3 of job job_20260101_001 was not found." {
		t.Errorf("en pick: %q", got)
	}
	if got := T(JA, MsgPickNotFound, "job_20260101_001", 3); got != "ジョブ job_20260101_001 の候補 3 は見つかりませんでした。" {
		t.Errorf("ja pick: %q", got)
	}
}

func TestParseLocale(t *testing.T) {
	for _, tt := range []struct {
		in   string
		def  Locale
		want Locale
	}{{"", JA, JA}, {"", EN, EN}, {"en", JA, EN}, {"en-US", JA, EN}, {"ja-JP", EN, JA}, {"fr", JA, JA}} {
		if got := ParseLocale(tt.in, tt.def); got != tt.want {
			t.Errorf("ParseLocale(%q,%s) = %s, want %s", tt.in, tt.def, got, tt.want)
		}
	}
}

func TestUsageFor(t *testing.T) {
	for name, want := range map[string]MsgKey{"/approve": MsgUsageApprove, "/deny": MsgUsageDeny, "/pick": MsgUsagePick,
		"/auto-approve": MsgUsageAuto, "": MsgUsageUnknown} {
		if got := UsageFor(EN, name); got != T(EN, want) {
			t.Errorf("UsageFor(%q) = %q", name, got)
		}
	}
	if got := UsageFor(JA, "/status"); got != "使い方: /status（引数はありません）" {
		t.Errorf("status usage %q", got)
	}
}

// Every MsgKey constant declared in messages.go has a text in both locales.
func TestEveryMessageKeyHasText(t *testing.T) {
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "messages.go", nil, 0)
	if err != nil {
		t.Fatal(err)
	}
	n := 0
	for _, d := range f.Decls {
		gd, ok := d.(*ast.GenDecl)
		if !ok || gd.Tok != token.CONST {
			continue
		}
		for _, spec := range gd.Specs {
			vs := spec.(*ast.ValueSpec)
			if id, ok := vs.Type.(*ast.Ident); !ok || id.Name != "MsgKey" {
				continue
			}
			for _, v := range vs.Values {
				key := MsgKey(strings.Trim(v.(*ast.BasicLit).Value, `"`))
				n++
				if _, ok := catalog[key]; !ok {
					t.Errorf("message %q has no text", key)
				}
			}
		}
	}
	if n < 40 {
		t.Fatalf("found only %d message keys", n)
	}
}
