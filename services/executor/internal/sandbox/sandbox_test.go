package sandbox

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestMain(m *testing.M) {
	MaybeRunInit()
	os.Exit(m.Run())
}

func run(t *testing.T, cfg Config, ws string, script string) (string, Status) {
	t.Helper()
	p, err := cfg.Command(Request{Argv: []string{"bash", "-c", script}, Workspace: ws,
		Env: []string{"PATH=/usr/local/bin:/usr/bin:/bin", "LANG=C.UTF-8"}})
	if err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	p.Cmd.Stdout, p.Cmd.Stderr = &out, &out
	if err := p.Cmd.Start(); err != nil {
		t.Fatal(err)
	}
	if err := p.Started(); err != nil {
		t.Fatal(err)
	}
	st := p.Wait()
	return out.String(), st
}

func TestSandboxBasics(t *testing.T) {
	ws := t.TempDir()
	secret := filepath.Join(filepath.Dir(ws), "secret.txt")
	if err := os.WriteFile(secret, []byte("canary-123"), 0o600); err != nil {
		t.Fatal(err)
	}
	t.Setenv("OPENAI_API_KEY", "sk-canary")
	out, st := run(t, DefaultConfig(), ws, `set -x; id; echo hi > a.txt; cat a.txt; ls /proc; cat /proc/1/environ | tr '\0' '\n'; env; cat `+secret+`; ls /tmp /run /root /home; echo x > /etc/x; ls -la /var/run/postgresql; cat /etc/shadow | head -2; ls /proc/1/; cat /proc/1/cmdline; exit 3`)
	t.Logf("status %+v\n%s", st, out)
	if strings.Contains(out, "canary-123") || strings.Contains(out, "sk-canary") {
		t.Fatal("leak")
	}
}
