package testinfra

import (
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

// fakeTB records what Postgres/Redis do when the server is unreachable.
type fakeTB struct {
	fatal, skip string
	cleanups    []func()
}

func (f *fakeTB) Helper()                        {}
func (f *fakeTB) Name() string                   { return "TestFake/unreachable" }
func (f *fakeTB) Cleanup(fn func())              { f.cleanups = append(f.cleanups, fn) }
func (f *fakeTB) Logf(string, ...any)            {}
func (f *fakeTB) Fatalf(format string, a ...any) { f.fatal = fmt.Sprintf(format, a...) }
func (f *fakeTB) Skipf(format string, a ...any)  { f.skip = fmt.Sprintf(format, a...) }

func TestUnreachableFailsLoudlyWhenRequired(t *testing.T) {
	t.Setenv(EnvRequireIntegration, "1")
	t.Setenv(EnvPostgresDSN, "postgres://postgres@127.0.0.1:1/test?sslmode=disable&connect_timeout=1")
	t.Setenv(EnvRedisAddr, "127.0.0.1:1")

	pg := &fakeTB{}
	Postgres(pg)
	if pg.skip != "" || !strings.Contains(pg.fatal, "postgres is required") {
		t.Fatalf("Postgres: fatal=%q skip=%q, want a loud failure", pg.fatal, pg.skip)
	}
	rd := &fakeTB{}
	Redis(rd)
	if rd.skip != "" || !strings.Contains(rd.fatal, "redis is required") {
		t.Fatalf("Redis: fatal=%q skip=%q, want a loud failure", rd.fatal, rd.skip)
	}
}

func TestUnreachableSkipsWhenNotRequired(t *testing.T) {
	t.Setenv(EnvRequireIntegration, "")
	t.Setenv(EnvRedisAddr, "127.0.0.1:1")
	rd := &fakeTB{}
	Redis(rd)
	if rd.fatal != "" || !strings.Contains(rd.skip, EnvRedisAddr) {
		t.Fatalf("fatal=%q skip=%q, want a skip naming %s", rd.fatal, rd.skip, EnvRedisAddr)
	}
}

func TestPostgresSchemaIsIsolated(t *testing.T) {
	a, b := Postgres(t), Postgres(t)
	if a.Schema == b.Schema || !strings.Contains(a.DSN, "search_path="+a.Schema) {
		t.Fatalf("schemas not isolated: %+v %+v", a, b)
	}
}

func TestRedisPrefixIsIsolated(t *testing.T) {
	a, b := Redis(t), Redis(t)
	if a.Prefix == b.Prefix || a.Client == nil {
		t.Fatalf("prefixes not isolated: %q %q", a.Prefix, b.Prefix)
	}
}

func TestWithSearchPath(t *testing.T) {
	if got := WithSearchPath("postgres://u@h:5432/db?sslmode=disable", "s1"); !strings.Contains(got, "search_path=s1") || !strings.Contains(got, "sslmode=disable") {
		t.Fatalf("url form: %s", got)
	}
	if got := WithSearchPath("host=h dbname=db", "s1"); got != "host=h dbname=db search_path=s1" {
		t.Fatalf("keyword form: %s", got)
	}
}

func TestFreeAddrsAreDistinctBindableAndOutsideTheEphemeralRange(t *testing.T) {
	addrs, err := FreeAddrs(50)
	if err != nil {
		t.Fatal(err)
	}
	seen := map[string]bool{}
	for _, a := range addrs {
		if seen[a] {
			t.Fatalf("duplicate %s", a)
		}
		seen[a] = true
		_, p, _ := net.SplitHostPort(a)
		if n, _ := strconv.Atoi(p); n < portLow || n >= portHigh {
			t.Fatalf("port %d outside %d..%d", n, portLow, portHigh)
		}
		ln, err := net.Listen("tcp", a)
		if err != nil {
			t.Fatalf("%s not bindable: %v", a, err)
		}
		ln.Close()
	}
}

func TestAPortReservedByALivingProcessIsNotHandedOut(t *testing.T) {
	dir := t.TempDir()
	old := portsDir
	portsDir = dir
	t.Cleanup(func() { portsDir = old })

	// A living process (the test's parent) holds the port: it is refused.
	held := portLow + 1
	if err := os.WriteFile(filepath.Join(dir, strconv.Itoa(held)), []byte(strconv.Itoa(os.Getppid())), 0o644); err != nil {
		t.Fatal(err)
	}
	if reservePort(held) {
		t.Fatalf("port %d reserved by living pid %d was claimed again", held, os.Getppid())
	}

	// A reservation whose process has ended is taken over.
	dead := exec.Command("true")
	if err := dead.Run(); err != nil {
		t.Fatal(err)
	}
	stale := portLow + 2
	if err := os.WriteFile(filepath.Join(dir, strconv.Itoa(stale)), []byte(strconv.Itoa(dead.Process.Pid)), 0o644); err != nil {
		t.Fatal(err)
	}
	if !reservePort(stale) {
		t.Fatalf("port %d held by ended pid %d was not taken over", stale, dead.Process.Pid)
	}
	b, _ := os.ReadFile(filepath.Join(dir, strconv.Itoa(stale)))
	if string(b) != strconv.Itoa(os.Getpid()) {
		t.Fatalf("reservation holds %q, want this process %d", b, os.Getpid())
	}

	// What FreeAddrs hands out is reserved for this process and not handed out twice.
	seen := map[string]bool{}
	for range 20 {
		addrs, err := FreeAddrs(5)
		if err != nil {
			t.Fatal(err)
		}
		for _, a := range addrs {
			if seen[a] {
				t.Fatalf("%s handed out twice", a)
			}
			seen[a] = true
			_, port, _ := net.SplitHostPort(a)
			if _, err := os.Stat(filepath.Join(dir, port)); err != nil {
				t.Fatalf("%s handed out without a reservation: %v", a, err)
			}
		}
	}
}
