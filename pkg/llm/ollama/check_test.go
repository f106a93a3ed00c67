package ollama

import (
	"context"
	"testing"

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
			if got != want {
				t.Fatalf("Check = %+v\nwant    %+v", got, want)
			}
			if got.OK() != (want.Problem == "") {
				t.Errorf("OK() = %v", got.OK())
			}
		})
	}
}
