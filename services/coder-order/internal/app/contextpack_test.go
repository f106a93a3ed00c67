package app

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"
	"regexp"
	"sort"
	"strings"
	"testing"
	"time"

	"github.com/picoclaw-suite/picoclaw/pkg/jobid"
	"github.com/picoclaw-suite/picoclaw/pkg/patch"
	"github.com/picoclaw-suite/picoclaw/pkg/testinfra"
)

// dirWorkspace is the view's contract over a fixture directory, for use-case tests of
// coder-order (the executor's own tests cover confinement, .gitignore and secret rules; here
// the fixture's secret file is withheld the same way, by name).
type dirWorkspace struct {
	dir   string
	reads []string
}

func secretName(p string) bool {
	b := filepath.Base(p)
	return strings.HasPrefix(b, ".env") || strings.HasSuffix(b, ".pem")
}

func (w *dirWorkspace) ListTree(_ context.Context, max int) ([]string, bool, error) {
	var out []string
	err := filepath.WalkDir(w.dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel, _ := filepath.Rel(w.dir, p)
		if !secretName(rel) {
			out = append(out, filepath.ToSlash(rel))
		}
		return nil
	})
	sort.Strings(out)
	if len(out) > max {
		return out[:max], true, err
	}
	return out, false, err
}

func (w *dirWorkspace) ReadFile(_ context.Context, name string, max int) (string, string, bool, error) {
	w.reads = append(w.reads, name)
	if secretName(name) {
		return "", "", false, ErrFileRefused
	}
	data, err := os.ReadFile(filepath.Join(w.dir, name))
	if errors.Is(err, fs.ErrNotExist) {
		return "", "", false, ErrFileNotFound
	}
	if err != nil {
		return "", "", false, err
	}
	sum := sha256.Sum256(data)
	if len(data) > max {
		return string(data[:max]), hex.EncodeToString(sum[:]), true, nil
	}
	return string(data), hex.EncodeToString(sum[:]), false, nil
}

// Remotes: the fixture is a repository with one remote.
func (w *dirWorkspace) Remotes(context.Context) (map[string]string, error) {
	return map[string]string{"origin": "https://git.example.com/team/calc.git"}, nil
}

func (w *dirWorkspace) Search(ctx context.Context, expr string, max int) ([]string, error) {
	re, err := regexp.Compile(expr)
	if err != nil {
		return nil, err
	}
	files, _, _ := w.ListTree(ctx, 1<<30)
	var out []string
	for _, f := range files {
		data, err := os.ReadFile(filepath.Join(w.dir, f))
		if err != nil {
			return nil, err
		}
		for _, l := range strings.Split(string(data), "\n") {
			if re.MatchString(l) && len(out) < max {
				out = append(out, f)
			}
		}
	}
	return out, nil
}

const calcGo = "package calc\n\nfunc Add(a, b int) int { return a + b }\n\nfunc Sub(a, b int) int { return a - b }\n"

// The fixture's secret, in a form pkg/redact masks.
const fixtureSecret = "sk-proj-FixtureSecretAbCdEfGhIjKlMnOpQrSt"

func fixture(t testing.TB, extra map[string]string) *dirWorkspace {
	t.Helper()
	dir := t.TempDir()
	files := map[string]string{
		"calc.go":        calcGo,
		"calc_test.go":   "package calc\n\nimport \"testing\"\n\nfunc TestAdd(t *testing.T) { _ = Add(1, 2) }\n",
		"README.md":      "# calc\n",
		"cmd/main.go":    "package main\n\nfunc main() { println(calc.Sub(3, 1)) }\n",
		"docs/notes.md":  "nothing here\n",
		".env":           "OPENAI_API_KEY=" + fixtureSecret + "\n",
		"certs/tls.pem":  "-----BEGIN PRIVATE KEY-----\nAAAA\n-----END PRIVATE KEY-----\n",
		"internal/x.txt": "unrelated\n",
	}
	for k, v := range extra {
		files[k] = v
	}
	testinfra.WriteFiles(t, dir, files)
	return &dirWorkspace{dir: dir}
}

func sha(s string) string {
	h := sha256.Sum256([]byte(s))
	return hex.EncodeToString(h[:])
}

func TestContextPackPicksNamedAndSearchedFiles(t *testing.T) {
	ws := fixture(t, nil)
	pack, err := BuildContextPack(context.Background(), ws, Task{Text: "Fix the overflow in `Sub` of calc.go", Context: []string{"earlier: see README.md"}}, 8000)
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]string{}
	for _, f := range pack.Files {
		got[f.Path] = f.Why
		if f.SHA256 != sha(f.Content) {
			t.Errorf("%s: hash %s does not match its content", f.Path, f.SHA256)
		}
	}
	if got["calc.go"] != "named" || got["README.md"] != "named" || got["cmd/main.go"] != "search" {
		t.Errorf("files = %v", got)
	}
	if _, ok := got["docs/notes.md"]; ok {
		t.Errorf("unrelated file packed: %v", got)
	}
	r := pack.Render()
	if !strings.Contains(r, "func Sub") || !strings.Contains(r, "calc_test.go\n") || strings.Contains(r, fixtureSecret) || strings.Contains(r, ".env") ||
		!strings.Contains(r, "origin https://git.example.com/team/calc.git") {
		t.Errorf("rendered pack:\n%s", r)
	}
	// A small budget keeps the pack within it.
	small, err := BuildContextPack(context.Background(), ws, Task{Text: "Fix Sub in calc.go"}, 60)
	if err != nil {
		t.Fatal(err)
	}
	if small.Tokens > 60 || len(small.Files) != 0 {
		t.Errorf("budget 60: %d tokens, %d files", small.Tokens, len(small.Files))
	}
}

func proposalFor(patchText string) string {
	return validAnswer(map[string]any{"plan": "Sub を直す", "patch": patchText, "task_type": "codegen",
		"artifacts": []string{"calc.go"}, "constraints": []string{"keep Add unchanged"}})
}

// The request each provider receives holds the file it must change (and never the secret
// file); the proposal comes back bound to the content the coder saw.
func TestProposeSeesTheFileAndIsBoundToIt(t *testing.T) {
	update := "```go:calc.go\npackage calc\n\nfunc Add(a, b int) int { return a + b }\n\nfunc Sub(a, b int) int { return a - b + 0 }\n```\n"
	for _, w := range []struct {
		wire     wire
		provider string
	}{{wireOpenAI, "openai"}, {wireAnthropic, "anthropic"}, {wireOpenAI, "deepseek"}} {
		t.Run(w.provider, func(t *testing.T) {
			ws := fixture(t, nil)
			f := newFakeModel(t, w.wire, reply{text: proposalFor(update)})
			var log bytes.Buffer
			p := newTestProposer(t, &log, Limits{CostUSD: 1, Tokens: 100000}, 0, orderSpec{id: "order2", provider: w.provider, url: f.srv.URL})
			p.workspace = ws
			ctx := jobid.WithJobID(context.Background(), "job_20261121_050")
			prop, err := p.Propose(ctx, "order2", Task{Text: "calc.go の Sub を直して"})
			if err != nil {
				t.Fatal(err)
			}
			raw, _ := json.Marshal(f.requests())
			if !strings.Contains(string(raw), "func Sub(a, b int) int { return a - b }") || !strings.Contains(string(raw), sha(calcGo)) {
				t.Errorf("the request lacks calc.go and its hash: %s", raw)
			}
			if strings.Contains(string(raw), fixtureSecret) || strings.Contains(string(raw), "PRIVATE KEY") {
				t.Error("a secret file reached the provider")
			}
			if prop.Base["calc.go"] != sha(calcGo) || len(prop.Base) != 1 {
				t.Errorf("base = %v", prop.Base)
			}
			if strings.Join(prop.Artifacts, ",") != "calc.go" || strings.Join(prop.Constraints, ",") != "keep Add unchanged" {
				t.Errorf("artifacts %v constraints %v", prop.Artifacts, prop.Constraints)
			}
			parsed, err := patch.Parse(prop.Patch, patch.Options{})
			if err != nil {
				t.Fatal(err)
			}
			if b := patch.Bases(parsed); b["calc.go"] != sha(calcGo) {
				t.Errorf("the patch carries base %v", b)
			}
			// The whole-file update is carried as its real diff against what the coder saw.
			if op := parsed.Operations[0]; op.Action != patch.ActionPatch ||
				!strings.Contains(op.Content, "-func Sub(a, b int) int { return a - b }\n+func Sub(a, b int) int { return a - b + 0 }\n") {
				t.Errorf("update not carried as its diff: %+v", op)
			}
			findLog(t, log.String(), "coder.context_pack")
		})
	}
}

// A file the coder was not shown is bound to its content at proposal time; a new file to
// "none"; a base the model invents for a file it was shown is replaced by what it was shown.
func TestBaseForFilesNotShown(t *testing.T) {
	ws := fixture(t, nil)
	text := `[{"type":"file_edit","action":"update","target":"docs/notes.md","content":"x\n"},` +
		`{"type":"file_edit","action":"create","target":"new.go","content":"package calc\n"},` +
		`{"type":"file_edit","action":"update","target":"calc.go","content":"package calc\n"},` +
		`{"type":"shell_command","action":"run","target":"go test ./..."}]`
	ans := validAnswer(map[string]any{"patch": text, "base": map[string]string{"calc.go": strings.Repeat("0", 64)}})
	f := newFakeModel(t, wireOpenAI, reply{text: ans})
	var log bytes.Buffer
	p := newTestProposer(t, &log, Limits{}, 0, orderSpec{id: "order2", provider: "openai", url: f.srv.URL})
	p.workspace = ws
	prop, err := p.Propose(context.Background(), "order2", Task{JobID: "job_20261121_051", Text: "update calc.go"})
	if err != nil {
		t.Fatal(err)
	}
	want := map[string]string{"docs/notes.md": sha("nothing here\n"), "new.go": patch.BaseAbsent, "calc.go": sha(calcGo)}
	if fmt.Sprint(prop.Base) != fmt.Sprint(want) {
		t.Errorf("base = %v, want %v", prop.Base, want)
	}
	parsed, err := patch.Parse(prop.Patch, patch.Options{})
	if err != nil || len(parsed.Operations) != 4 || parsed.Operations[3].Target != "go test ./..." {
		t.Fatalf("patch = %v %v", parsed, err)
	}
}

// An answer with an invalid base is repaired like any other contract problem.
func TestInvalidBaseIsAContractProblem(t *testing.T) {
	f := newFakeModel(t, wireOpenAI, reply{text: validAnswer(map[string]any{"base": map[string]string{"README.md": "sha256:x"}})}, reply{text: validAnswer(nil)})
	var log bytes.Buffer
	p := newTestProposer(t, &log, Limits{}, 0, orderSpec{id: "order2", provider: "openai", url: f.srv.URL})
	prop, err := p.Propose(context.Background(), "order2", Task{JobID: "job_20261121_052", Text: "docs"})
	if err != nil || !prop.Repaired {
		t.Fatalf("prop = %+v, %v", prop, err)
	}
	raw, _ := json.Marshal(f.requests()[1])
	if !strings.Contains(string(raw), "base.README.md") {
		t.Errorf("repair request does not name the field: %s", raw)
	}
}

// BenchmarkContextPack5000 measures the context pack for a 5,000-file repository (the
// view's answers in memory; the executor's side is BenchmarkViewSearch5000 there).
func BenchmarkContextPack5000(b *testing.B) {
	ws := &memWorkspace{files: map[string]string{}}
	for i := range 5000 {
		dir := fmt.Sprintf("pkg%02d/sub%02d", i%50, (i/50)%10)
		ws.files[fmt.Sprintf("%s/file%04d.go", dir, i)] = fmt.Sprintf("package p%d\n\nfunc F%d() int { return %d }\n\n// helper%d does nothing.\nfunc helper%d() {}\n", i%50, i, i, i, i)
	}
	ws.files["calc/calc.go"] = calcGo
	ws.index()
	task := Task{Text: "Fix `Sub` in calc/calc.go and call F42 from helper43", Context: []string{"see pkg01/sub00/file0001.go"}}
	ctx := context.Background()
	var times []time.Duration
	b.ResetTimer()
	for b.Loop() {
		start := time.Now()
		pack, err := BuildContextPack(ctx, ws, task, 8000)
		if err != nil || len(pack.Files) < 3 {
			b.Fatalf("pack: %d files, %v", len(pack.Files), err)
		}
		times = append(times, time.Since(start))
	}
	sort.Slice(times, func(i, j int) bool { return times[i] < times[j] })
	b.ReportMetric(float64(times[len(times)/2].Microseconds())/1000, "p50-ms")
}

// memWorkspace answers like the view, from memory; a search's answer is kept, so the benchmark
// measures the pack, not this fake (the view's own cost is the executor's benchmark).
type memWorkspace struct {
	files    map[string]string
	paths    []string
	searches map[string][]string
}

func (m *memWorkspace) index() {
	for p := range m.files {
		m.paths = append(m.paths, p)
	}
	sort.Strings(m.paths)
}

func (m *memWorkspace) ListTree(_ context.Context, max int) ([]string, bool, error) {
	if len(m.paths) > max {
		return m.paths[:max], true, nil
	}
	return m.paths, false, nil
}

func (m *memWorkspace) ReadFile(_ context.Context, name string, _ int) (string, string, bool, error) {
	c, ok := m.files[name]
	if !ok {
		return "", "", false, ErrFileNotFound
	}
	return c, sha(c), false, nil
}

func (m *memWorkspace) Remotes(context.Context) (map[string]string, error) { return nil, nil }

func (m *memWorkspace) Search(_ context.Context, expr string, max int) ([]string, error) {
	key := fmt.Sprint(expr, "|", max)
	if got, ok := m.searches[key]; ok {
		return got, nil
	}
	out := m.search(expr, max)
	if m.searches == nil {
		m.searches = map[string][]string{}
	}
	m.searches[key] = out
	return out, nil
}

func (m *memWorkspace) search(expr string, max int) []string {
	re := regexp.MustCompile(expr)
	var out []string
	for _, p := range m.paths {
		if c := m.files[p]; re.MatchString(c) {
			for _, l := range strings.Split(c, "\n") {
				if re.MatchString(l) && len(out) < max {
					out = append(out, p)
				}
			}
		}
	}
	return out
}

// A whole-file update written without the function it drops is shown with the removed lines:
// the approver sees -func Sub, never "+N −0".
func TestWholeFileUpdateThatDropsAFunctionShowsTheRemovedLines(t *testing.T) {
	ws := fixture(t, nil)
	update := "```go:calc.go\npackage calc\n\nfunc Add(a, b int) int { return a + b }\n\nfunc Mul(a, b int) int { return a * b }\n```\n"
	f := newFakeModel(t, wireOpenAI, reply{text: proposalFor(update)})
	p := newTestProposer(t, &bytes.Buffer{}, Limits{}, 0, orderSpec{id: "order2", provider: "openai", url: f.srv.URL})
	p.workspace = ws
	prop, err := p.Propose(context.Background(), "order2", Task{JobID: "job_20261121_052", Text: "add Mul to calc.go"})
	if err != nil {
		t.Fatal(err)
	}
	parsed, err := patch.Parse(prop.Patch, patch.Options{})
	if err != nil {
		t.Fatal(err)
	}
	if parsed.Stats.Deletions == 0 || !strings.Contains(parsed.Operations[0].Content, "-func Sub(a, b int) int { return a - b }") {
		t.Fatalf("the dropped function is not shown as removed: stats %+v\n%s", parsed.Stats, parsed.Operations[0].Content)
	}
}
