package cli

import (
	"bufio"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/picoclaw-suite/picoclaw/pkg/sqlstate"
)

// seedData makes a data directory with a state database holding a row with a secret.
func seedData(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	db, err := sqlstate.Open(context.Background(), filepath.Join(dir, "state.db"), sqlstate.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	if err := db.Migrate(context.Background(), "test", `CREATE TABLE notes (id INTEGER PRIMARY KEY, body TEXT, expires_at INTEGER NOT NULL DEFAULT 0)`); err != nil {
		t.Fatal(err)
	}
	for _, body := range []string{"hello", "my key is sk-proj-abcdefghijklmnopqrstuvwxyz0123456789"} {
		if _, err := db.Exec(`INSERT INTO notes (body) VALUES (?)`, body); err != nil {
			t.Fatal(err)
		}
	}
	return dir
}

func TestDataExportWritesEveryRowWithSecretsMasked(t *testing.T) {
	dir := seedData(t)
	code, out, errOut := run(t, "", "", "data", "export", "--data", dir)
	if code != ExitOK {
		t.Fatalf("export: %d %s", code, errOut)
	}
	if strings.Contains(out, "sk-proj-abcdefghijklmnopqrstuvwxyz0123456789") {
		t.Fatal("a secret was exported in clear")
	}
	var notes []string
	sc := bufio.NewScanner(strings.NewReader(out))
	for sc.Scan() {
		var r exportRow
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("not JSON lines: %q", sc.Text())
		}
		if r.DB == "state.db" && r.Table == "notes" {
			notes = append(notes, r.Row["body"].(string))
		}
	}
	if len(notes) != 2 || notes[0] != "hello" || !strings.Contains(notes[1], "my key is") {
		t.Fatalf("notes exported: %q", notes)
	}
	if !strings.Contains(errOut, "3 行を書き出しました") {
		t.Errorf("no summary: %q", errOut)
	}
}

func TestDataCompactNeedsTheSuiteStopped(t *testing.T) {
	dir := seedData(t)
	lock, err := lockDataDir(dir) // a running suite holds this
	if err != nil {
		t.Fatal(err)
	}
	code, _, errOut := run(t, "", "", "data", "compact", "--data", dir)
	if code == ExitOK || !strings.Contains(errOut, "ほかの picoclaw（pid ") {
		t.Fatalf("compact while the suite runs: %d %s", code, errOut)
	}
	lock.Close()
	code, out, errOut := run(t, "", "", "data", "compact", "--data", dir)
	if code != ExitOK || !strings.Contains(out, "state.db:") {
		t.Fatalf("compact: %d %s %s", code, out, errOut)
	}
	if code, _, _ := run(t, "", "", "data", "shrink", "--data", dir); code != ExitUsage {
		t.Errorf("unknown data command exit %d, want %d", code, ExitUsage)
	}
}

// An unknown flag is a usage error (exit 2); --help lists every option with its default.
func TestFlagsUsageAndHelp(t *testing.T) {
	if code, _, errOut := run(t, "", "", "data", "export", "--bogus"); code != ExitUsage || !strings.Contains(errOut, "-bogus") {
		t.Fatalf("unknown flag: exit %d %q", code, errOut)
	}
	code, out, _ := run(t, "", "", "run", "--help")
	if code != ExitOK {
		t.Fatalf("--help exit %d", code)
	}
	for _, want := range []string{"usage: picoclaw run", "-data string", "-chat string", `(default "auto")`, "-grace duration"} {
		if !strings.Contains(out, want) {
			t.Errorf("run --help lacks %q:\n%s", want, out)
		}
	}
}

// An export goes to a new owner-only file; an existing one is not overwritten.
func TestDataExportToANewFileOnly(t *testing.T) {
	dir := seedData(t)
	out := filepath.Join(t.TempDir(), "export.jsonl")
	if code, _, errOut := run(t, "", "", "data", "export", "--data", dir, "--out", out); code != ExitOK {
		t.Fatalf("export: %d %s", code, errOut)
	}
	fi, err := os.Stat(out)
	if err != nil || fi.Mode().Perm() != 0o600 || fi.Size() == 0 {
		t.Fatalf("export file: %v %v", fi, err)
	}
	if code, _, errOut := run(t, "", "", "data", "export", "--data", dir, "--out", out); code == ExitOK || !strings.Contains(errOut, "すでにあります）。新しいファイルを指定してください") {
		t.Fatalf("export over an existing file: %d %s", code, errOut)
	}
}
