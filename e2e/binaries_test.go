package e2e

import (
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/picoclaw-suite/picoclaw/pkg/config"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/picoclaw-suite/picoclaw/pkg/testinfra"
	"github.com/picoclaw-suite/picoclaw/pkg/testinfra/launch"
)

// internalToken is the suite's service credential in these tests.

var services = launch.Services

// binDir holds the binaries TestMain built; it is set once before any test runs.
var binDir string

func TestMain(m *testing.M) {
	dir, err := os.MkdirTemp("", "picoclaw-e2e-bin-")
	if err != nil {
		fmt.Fprintln(os.Stderr, err)
		os.Exit(1)
	}
	code := 1
	if err := buildBinaries(dir); err != nil {
		fmt.Fprintln(os.Stderr, err)
	} else {
		binDir = dir
		code = m.Run()
	}
	_ = os.RemoveAll(dir)
	os.Exit(code)
}

// The version and commit the e2e binaries are stamped with, as the release build stamps them.
const (
	stampedVersion = "v0.0.0-e2e"
	stampedCommit  = "e2e0123456ab" // 12 characters: buildinfo shows a commit as its first 12
)

// buildBinaries compiles every service once into dir, as released (-tags serveronly, stripped,
// version and commit stamped). Without symbol tables and DWARF the eight binaries link in about
// half the time.
func buildBinaries(dir string) error {
	flags := append(slices.Clone(launch.ShippedServiceFlags), "-ldflags=-s -w"+
		" -X github.com/picoclaw-suite/picoclaw/pkg/buildinfo.version="+stampedVersion+
		" -X github.com/picoclaw-suite/picoclaw/pkg/buildinfo.commit="+stampedCommit)
	return launch.Build(context.Background(), "..", dir, flags...)
}

var envKey = launch.EnvKey

// auditKey seals the suite's audit log in these tests.
const auditKey = "e2e-audit-key-0123456789abcdef0123456789"

// suiteEnv points every service at free ports and at this test's isolated databases.
func suiteEnv(t *testing.T, workspace string) (map[string]string, []string, testinfra.RedisDB) {
	pg := testinfra.Postgres(t)
	_, runtimeDSN := testinfra.PostgresRole(t, pg)
	rd := testinfra.Redis(t)
	addrs := map[string]string{}
	env := append(os.Environ(),
		// approval migrates as the owner and runs as a role that cannot change the audit log.
		"PICOCLAW_POSTGRES_MIGRATE_DSN="+pg.DSN,
		"PICOCLAW_POSTGRES_DSN="+runtimeDSN,
		"PICOCLAW_AUDIT_KEY="+auditKey,
		"PICOCLAW_REDIS_ADDR="+rd.Addr,
		"PICOCLAW_REDIS_KEY_PREFIX="+rd.Prefix,
		"PICOCLAW_EXECUTOR_WORKSPACE="+workspace,
		"PICOCLAW_EXECUTOR_STATE_DIR="+workspace+"-executor-state",
		"PICOCLAW_HEARTBEAT_INTERVAL_SEC=1",
		"PICOCLAW_HEARTBEAT_TIMEOUT_SEC=3",
		"LINE_CHANNEL_SECRET="+lineSecret,
		"LINE_CHANNEL_ACCESS_TOKEN="+lineToken,
		"SLACK_SIGNING_SECRET="+slackSecret,
		"SLACK_BOT_TOKEN="+slackToken,
		// No model server here: the chat and worker agents use the offline provider.
		"PICOCLAW_AGENTS_CHAT_PROVIDER=offline",
		"PICOCLAW_AGENTS_WORKER_PROVIDER=offline",
	)
	layout, err := launch.NewLayout()
	if err != nil {
		t.Fatal(err)
	}
	maps.Copy(addrs, layout.Addrs)
	// The gateways' webhooks and approval's REST API and console listen apart from their RPC.
	for s, a := range layout.Public {
		addrs[s+"-public"] = a
	}
	return addrs, append(env, layout.Env()...), rd
}

// identityEnv gives one service process its own key (and every public key).
func identityEnv(env []string, service string) []string {
	return append(slices.Clip(env), testinfra.AuthEnv(service)...)
}

// TestEveryBinaryStartsAnswersHealthAndStopsOnSIGTERM runs each of the eight binaries as a
// process: /healthz, a gRPC health check over h2c, then SIGTERM must end it cleanly.
func TestEveryBinaryStartsAnswersHealthAndStopsOnSIGTERM(t *testing.T) {
	bin := binDir
	addrs, env, _ := suiteEnv(t, t.TempDir())
	// Each service at its default priority, whatever this test's environment says.
	env = append(env, "PICOCLAW_NICE=")
	for _, name := range services {
		t.Run(name, func(t *testing.T) {
			logs := &testinfra.SyncBuffer{}
			// config/persona and config/rules.yaml are found from the repository root.
			p, err := launch.Start(context.Background(), launch.Spec{Name: name, BinDir: bin, Dir: "..", Env: env,
				Addr: addrs[name], ReadyPath: "/healthz", Output: logs})
			if err != nil {
				t.Fatalf("%v\n%s", err, logs)
			}
			defer p.Stop(time.Second)
			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()

			// /healthz names the build: the version and commit it was stamped with.
			var health struct{ Status, Service, Version, Commit string }
			hr, err := http.Get(p.URL() + "/healthz")
			if err != nil {
				t.Fatal(err)
			}
			err = json.NewDecoder(hr.Body).Decode(&health)
			hr.Body.Close()
			if err != nil || health.Status != "ok" || health.Service != name || health.Version != stampedVersion || health.Commit != stampedCommit {
				t.Fatalf("/healthz: %+v %v", health, err)
			}

			// The services whose work waits behind an answer already given run at a lower CPU
			// priority than the gateways and approval (runner.Behind).
			own := processNices(t, os.Getpid())[0]
			want := own
			if behindTheAnswer[name] {
				want = max(own, 10)
			}
			for _, n := range processNices(t, p.Pid()) {
				if n != want {
					t.Fatalf("a thread of %s runs at nice %d, want %d (this test runs at %d)", name, n, want, own)
				}
			}

			conn, err := grpc.NewClient(addrs[name], grpc.WithTransportCredentials(insecure.NewCredentials()))
			if err != nil {
				t.Fatal(err)
			}
			res, err := healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{})
			conn.Close()
			if err != nil {
				t.Fatalf("gRPC health check: %v\n%s", err, logs)
			}
			if res.GetStatus() != healthpb.HealthCheckResponse_SERVING {
				t.Fatalf("gRPC health status %v\n%s", res.GetStatus(), logs)
			}

			start := time.Now()
			if err := p.Stop(2 * time.Second); err != nil {
				t.Fatalf("after SIGTERM: %v\n%s", err, logs)
			}
			t.Logf("%s stopped %v after SIGTERM", name, time.Since(start).Round(time.Millisecond))
		})
	}
}

// behindTheAnswer are the services that run at runner.BehindNice.
var behindTheAnswer = map[string]bool{"chat-mio": true, "router-shiro": true, "coder-order": true, "executor": true}

// processNices reads the nice value of every thread of process pid.
func processNices(t *testing.T, pid int) []int {
	t.Helper()
	nices, err := testinfra.ThreadNices(pid)
	if err != nil {
		t.Fatal(err)
	}
	return nices
}

// TestBinariesLinkOnlyWhatTheyRun reads the module list of every built binary (go version -m):
// no binary links a provider SDK (the clients speak the providers' wires themselves), the
// embedded picoclaw, built as shipped (-tags sqliteonly), links neither the Redis client nor the
// Postgres driver: it runs on SQLite alone; approval links the Postgres driver and not the
// Redis client (its grant store speaks the three commands it needs itself); and no service,
// built as shipped (-tags serveronly), links SQLite: deployed on its own, it runs on Redis and
// Postgres.
func TestBinariesLinkOnlyWhatTheyRun(t *testing.T) {
	never := []string{"github.com/openai/openai-go/", "github.com/anthropics/anthropic-sdk-go"}
	const postgres = "github.com/lib/pq"
	servers := []string{"github.com/redis/go-redis/", postgres}
	const sqlite = "modernc.org/sqlite"
	cli := filepath.Join(t.TempDir(), "picoclaw")
	build := exec.Command("go", "build", "-tags", config.SQLiteOnlyTag, "-ldflags=-s -w", "-o", cli, "./cmd/picoclaw")
	build.Dir = ".."
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("go build ./cmd/picoclaw: %v\n%s", err, out)
	}
	bins := map[string]string{"picoclaw": cli}
	for _, s := range services {
		bins[s] = filepath.Join(binDir, s)
	}
	for name, path := range bins {
		out, err := exec.Command("go", "version", "-m", path).CombinedOutput()
		if err != nil {
			t.Fatalf("go version -m %s: %v\n%s", name, err, out)
		}
		var deps []string
		for _, line := range strings.Split(string(out), "\n") {
			if f := strings.Fields(line); len(f) >= 2 && (f[0] == "dep" || f[0] == "=>") {
				deps = append(deps, f[1])
			}
		}
		if !slices.Contains(deps, "github.com/picoclaw-suite/picoclaw/pkg") {
			t.Fatalf("%s: go version -m lists no module of ours; cannot judge its dependencies:\n%s", name, out)
		}
		links := func(mod string) bool {
			return slices.ContainsFunc(deps, func(d string) bool { return strings.HasPrefix(d, mod) })
		}
		for _, sdk := range never {
			if links(sdk) {
				t.Errorf("%s links %s", name, sdk)
			}
		}
		for _, mod := range servers {
			// Deployed on its own, approval keeps its log in Postgres (lib/pq) and its grant in
			// Redis (store.RedisClient).
			if want := name == "approval" && mod == postgres; (name == "picoclaw" || name == "approval") && links(mod) != want {
				t.Errorf("%s links %s: %v, want %v", name, mod, links(mod), want)
			}
		}
		if want := name == "picoclaw"; links(sqlite) != want {
			t.Errorf("%s links %s: %v, want %v", name, sqlite, links(sqlite), want)
		}
	}
}

// TestEveryBinaryPrintsItsVersion: `<binary> --version` prints its name and build, exits 0 and
// starts nothing.
func TestEveryBinaryPrintsItsVersion(t *testing.T) {
	for _, name := range services {
		out, err := exec.Command(filepath.Join(binDir, name), "--version").CombinedOutput()
		if err != nil || !strings.HasPrefix(string(out), name+" "+stampedVersion) || !strings.Contains(string(out), "("+stampedCommit+", ") || !strings.Contains(string(out), "go1.") {
			t.Errorf("%s --version: %v %q", name, err, out)
		}
	}
}
