package app

import (
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"io/fs"
	"log/slog"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/picoclaw-suite/picoclaw/pkg/patch"
	"github.com/picoclaw-suite/picoclaw/pkg/testinfra"
	"github.com/picoclaw-suite/picoclaw/services/executor/internal/proc"
	"github.com/picoclaw-suite/picoclaw/services/executor/internal/workspace"
)

// fixture is a temporary workspace inside a parent directory that also holds files the job
// must never reach.
type fixture struct {
	parent string
	ws     string
	w      *workspace.Workspace
	logs   *testinfra.SyncBuffer
	runner *Runner
}

// events lists the msg of every log line.
func events(logs *testinfra.SyncBuffer) []string {
	var out []string
	for _, rec := range logs.Records() {
		msg, _ := rec["msg"].(string)
		out = append(out, msg)
	}
	return out
}

func newFixture(t *testing.T, mutate func(*RunnerConfig)) *fixture {
	t.Helper()
	parent := t.TempDir()
	ws := filepath.Join(parent, "ws")
	for _, d := range []string{ws, filepath.Join(parent, "outside")} {
		if err := os.Mkdir(d, 0o755); err != nil {
			t.Fatal(err)
		}
	}
	writeFile(t, filepath.Join(parent, "outside", "secret.txt"), "top secret\n")
	writeFile(t, filepath.Join(parent, "parent.txt"), "parent\n")
	w, err := workspace.Open(ws)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = w.Close() })
	logs := &testinfra.SyncBuffer{}
	cfg := RunnerConfig{
		Workspace: w,
		Env:       proc.Env([]string{"PATH", "HOME", "LANG"}, os.LookupEnv),
		// Generous: every command starts a sandbox, which a loaded machine or the race
		// detector makes slow to start. Cases that want a timeout set their own.
		CommandTimeout: 20 * time.Second,
		GitTimeout:     20 * time.Second,
		OutputLimit:    64 << 10,
		GitAuthorName:  "PicoClaw Executor",
		GitAuthorEmail: "executor@picoclaw.invalid",
		BridgeTimeout:  time.Second,
		Logger:         slog.New(slog.NewJSONHandler(logs, nil)),
	}
	if mutate != nil {
		mutate(&cfg)
	}
	return &fixture{parent: parent, ws: w.Dir(), w: w, logs: logs, runner: NewRunner(cfg)}
}

func writeFile(t *testing.T, path, content string) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
}

func readFile(t *testing.T, path string) string {
	t.Helper()
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	return string(b)
}

// tree records everything under dir except skip: type, mode, content hash, link target.
func tree(t *testing.T, dir, skip string) map[string]string {
	t.Helper()
	out := map[string]string{}
	err := filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if p == skip {
			return filepath.SkipDir
		}
		fi, err := os.Lstat(p)
		if err != nil {
			return err
		}
		desc := fi.Mode().String()
		switch {
		case fi.Mode()&fs.ModeSymlink != 0:
			l, _ := os.Readlink(p)
			desc += " -> " + l
		case fi.Mode().IsRegular():
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			sum := sha256.Sum256(b)
			desc += " " + hex.EncodeToString(sum[:])
		}
		out[p] = desc
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// pids reads every *.pid file under dir.
// ops numbers operations in author order.
func ops(list ...patch.Operation) []patch.Operation {
	for i := range list {
		list[i].Index = i
	}
	return list
}

func fileOp(action, target, content string) patch.Operation {
	return patch.Operation{Type: patch.TypeFileEdit, Action: action, Target: target, Content: content}
}

func renameOp(from, to string) patch.Operation {
	return patch.Operation{Type: patch.TypeFileEdit, Action: patch.ActionRename, Target: from, Metadata: map[string]string{"to": to}}
}

func shellOp(line string) patch.Operation {
	return patch.Operation{Type: patch.TypeShell, Action: patch.ActionRun, Target: line}
}

func gitOp(action, target, content string, md map[string]string) patch.Operation {
	return patch.Operation{Type: patch.TypeGit, Action: action, Target: target, Content: content, Metadata: md}
}

func browserOp(action, target, content string) patch.Operation {
	return patch.Operation{Type: patch.TypeBrowser, Action: action, Target: target, Content: content}
}

// jsonParser stands in for pkg/patch.Parse in use-case tests: the patch text is the JSON of
// the operation list and the hash is its sha256.
func jsonParser(text string) (*patch.Patch, error) {
	var list []patch.Operation
	if err := json.Unmarshal([]byte(text), &list); err != nil {
		return nil, err
	}
	sum := sha256.Sum256([]byte(text))
	return &patch.Patch{Format: patch.FormatJSON, Operations: list, Hash: hex.EncodeToString(sum[:])}, nil
}

func patchText(t *testing.T, list []patch.Operation) (string, string) {
	t.Helper()
	b, err := json.Marshal(list)
	if err != nil {
		t.Fatal(err)
	}
	p, err := jsonParser(string(b))
	if err != nil {
		t.Fatal(err)
	}
	return string(b), p.Hash
}
