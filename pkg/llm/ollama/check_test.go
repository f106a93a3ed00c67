package ollama

import (
	"context"
	"reflect"
	"strings"
	"testing"

	"github.com/picoclaw-suite/picoclaw/pkg/fault"
	"github.com/picoclaw-suite/picoclaw/pkg/testinfra/fakellm"
)

// Check against Ollama's /api/tags and /api/show: present, and every context within its limit.
func TestCheck(t *testing.T) {
	const model = "chat-v1:latest"
	tests := []struct {
		name   string
		opts   []fakellm.Option
		numCtx int
		maxCtx int
		down   bool
		want   ModelStatus
	}{
		{name: "usable", opts: []fakellm.Option{fakellm.WithModels(model), fakellm.WithContextLength(32768), fakellm.WithParameters("num_ctx 8192\nstop \"<|im_end|>\"")},
			numCtx: 8192, maxCtx: 8192,
			want: ModelStatus{Reachable: true, Present: true, ContextLength: 32768, ModelNumCtx: 8192}},
		{name: "model without num_ctx", opts: []fakellm.Option{fakellm.WithModels("chat-v1"), fakellm.WithContextLength(4096)},
			numCtx: 4096, maxCtx: 8192,
			want: ModelStatus{Reachable: true, Present: true, ContextLength: 4096}},
		{name: "no max_context", opts: []fakellm.Option{fakellm.WithModels(model), fakellm.WithContextLength(131072), fakellm.WithParameters("num_ctx 65536")},
			numCtx: 65536, maxCtx: 0,
			want: ModelStatus{Reachable: true, Present: true, ContextLength: 131072, ModelNumCtx: 65536}},
		{name: "missing", opts: []fakellm.Option{fakellm.WithModels("other:latest")},
			numCtx: 8192, maxCtx: 8192,
			want: ModelStatus{Reachable: true, Problem: "model chat-v1:latest is not installed on {url}", Fix: SetupCommand}},
		{name: "unreachable", down: true, numCtx: 8192, maxCtx: 8192,
			want: ModelStatus{Problem: "*", Fix: "ollama serve"}},
		{name: "num_ctx above max_context", opts: []fakellm.Option{fakellm.WithModels(model), fakellm.WithContextLength(32768)},
			numCtx: 16384, maxCtx: 8192,
			want: ModelStatus{Reachable: true, Present: true, ContextLength: 32768,
				Problem: "num_ctx 16384 exceeds max_context 8192", Fix: "set ollama.num_ctx to at most ollama.max_context"}},
		{name: "model file num_ctx above max_context", opts: []fakellm.Option{fakellm.WithModels(model), fakellm.WithContextLength(131072), fakellm.WithParameters("num_ctx 32768")},
			numCtx: 8192, maxCtx: 8192,
			want: ModelStatus{Reachable: true, Present: true, ContextLength: 131072, ModelNumCtx: 32768,
				Problem: "model chat-v1:latest sets num_ctx 32768, above max_context 8192", Fix: SetupCommand + " --force"}},
		{name: "num_ctx above the trained context", opts: []fakellm.Option{fakellm.WithModels(model), fakellm.WithContextLength(2048)},
			numCtx: 4096, maxCtx: 8192,
			want: ModelStatus{Reachable: true, Present: true, ContextLength: 2048,
				Problem: "num_ctx 4096 exceeds the context length 2048 of model chat-v1:latest", Fix: "lower ollama.num_ctx"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			f := fakellm.Start(t, fakellm.Ollama, fakellm.Reply("x"), tt.opts...)
			if tt.down {
				f.Close()
			}
			got := Check(context.Background(), NewAPI(f.URL, nil), model, tt.numCtx, tt.maxCtx)
			want := tt.want
			want.Model, want.NumCtx, want.MaxContext = model, tt.numCtx, tt.maxCtx
			switch want.Problem {
			case "*":
				// The transport error's text is the operating system's; it names the server.
				if got.Problem == "" {
					t.Fatalf("unreachable server: no problem in %+v", got)
				}
				want.Problem = got.Problem
			case "model chat-v1:latest is not installed on {url}":
				want.Problem = "model chat-v1:latest is not installed on " + f.URL
			}
			// What is found is said in Japanese too, with the same arguments; a fix that is a
			// command stays as it is typed.
			if got.OK() {
				if got.ProblemText("ja") != "" || got.ProblemCode != "" {
					t.Errorf("a usable model has a problem: %+v", got)
				}
			} else {
				ja, en := got.ProblemText("ja"), got.ProblemText("en")
				if en != got.Problem && got.ProblemCode != ProblemUnreachable && got.ProblemCode != ProblemUnreadable || !fault.HasJapanese(ja) {
					t.Errorf("problem %q: ja %q, en %q", got.Problem, ja, en)
				}
				if fix := got.FixText("ja"); strings.HasPrefix(got.Fix, "ollama serve") || strings.HasPrefix(got.Fix, SetupCommand) {
					if fix != got.Fix {
						t.Errorf("the command %q said as %q", got.Fix, fix)
					}
				} else if !fault.HasJapanese(fix) || got.FixText("en") != got.Fix {
					t.Errorf("fix %q: ja %q", got.Fix, fix)
				}
			}
			got.ProblemCode, got.problemArgs, got.fixCode = "", nil, ""
			if !reflect.DeepEqual(got, want) {
				t.Fatalf("Check = %+v\nwant    %+v", got, want)
			}
			if got.OK() != (want.Problem == "") {
				t.Errorf("OK() = %v", got.OK())
			}
		})
	}
}

// Every text of a check in both languages, each argument in both.
func TestEveryCheckText(t *testing.T) {
	if err := CheckTexts.Check(); err != nil {
		t.Fatal(err)
	}
	if err := CheckTexts.CheckLanguages("Ollama", "num_ctx", "max_context", "ollama.num_ctx", "ollama.max_context"); err != nil {
		t.Fatal(err)
	}
	args := map[string][]string{
		ProblemUnreachable:     {"dial tcp 127.0.0.1:11434: connect: connection refused"},
		ProblemNotInstalled:    {"chat-v1:latest", "http://127.0.0.1:11434"},
		ProblemUnreadable:      {"chat-v1:latest", "HTTP 500"},
		ProblemNumCtxOverMax:   {"16384", "8192"},
		ProblemModelCtxOverMax: {"chat-v1:latest", "32768", "8192"},
		ProblemCtxOverTrained:  {"4096", "2048", "chat-v1:latest"},
		fixNumCtxAtMostMax:     nil,
		fixLowerNumCtx:         nil,
	}
	for code, a := range args {
		ja, en := CheckTexts.Text("ja", code, a...), CheckTexts.Text("en", code, a...)
		for _, arg := range a {
			if !strings.Contains(ja, arg) || !strings.Contains(en, arg) {
				t.Errorf("%s: %q missing in %q / %q", code, arg, ja, en)
			}
		}
	}
	CheckTexts.ReportUncovered(t.Errorf, func(code string) bool { _, ok := args[code]; return ok })
}
