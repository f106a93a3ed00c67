package e2e

import (
	"context"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	"github.com/picoclaw-suite/picoclaw/pkg/testinfra"
)

// internalToken is the suite's service credential in these tests.

var services = []string{
	"gateway-line", "gateway-slack", "chat-mio", "router-shiro",
	"coder-order", "approval", "executor", "heartbeat",
}

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

// buildBinaries compiles every service once into dir.
func buildBinaries(dir string) error {
	// Without symbol tables and DWARF the eight binaries link in about half the time.
	args := []string{"build", "-ldflags=-s -w", "-o", dir + "/"}
	for _, s := range services {
		args = append(args, "./services/"+s+"/cmd/"+s)
	}
	cmd := exec.Command("go", args...)
	cmd.Dir = ".."
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("go build: %w\n%s", err, out)
	}
	return nil
}

func envKey(service string) string {
	return strings.ToUpper(strings.ReplaceAll(service, "-", "_"))
}

// auditKey seals the suite's audit log in these tests.
const auditKey = "e2e-audit-key-0123456789abcdef0123456789"

// suiteEnv points every service at free ports and at this test's isolated databases.
func suiteEnv(t *testing.T, workspace string) (map[string]string, []string) {
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
	free, err := testinfra.FreeAddrs(len(services) + len(publicServices))
	if err != nil {
		t.Fatal(err)
	}
	for i, s := range services {
		addrs[s] = free[i]
	}
	// The gateways' webhooks and approval's REST API and console listen apart from their RPC.
	for i, s := range publicServices {
		addrs[s+"-public"] = free[len(services)+i]
		env = append(env,
			fmt.Sprintf("PICOCLAW_SERVICES_%s_PUBLIC_LISTEN=%s", envKey(s), addrs[s+"-public"]),
			fmt.Sprintf("PICOCLAW_SERVICES_%s_PUBLIC_URL=http://%s", envKey(s), addrs[s+"-public"]))
	}
	for _, s := range services {
		env = append(env,
			fmt.Sprintf("PICOCLAW_SERVICES_%s_LISTEN=%s", envKey(s), addrs[s]),
			fmt.Sprintf("PICOCLAW_SERVICES_%s_URL=http://%s", envKey(s), addrs[s]))
	}
	return addrs, env
}

// publicServices have a public listener besides the internal one.
var publicServices = []string{"gateway-line", "gateway-slack", "approval"}

// identityEnv gives one service process its own key (and every public key).
func identityEnv(env []string, service string) []string {
	return append(slices.Clip(env), testinfra.AuthEnv(service)...)
}

func waitHealthy(ctx context.Context, addr string) error {
	for {
		var res *http.Response
		req, err := http.NewRequestWithContext(ctx, http.MethodGet, "http://"+addr+"/healthz", nil)
		if err == nil {
			res, err = http.DefaultClient.Do(req)
		}
		if err == nil {
			res.Body.Close()
			if res.StatusCode == http.StatusOK {
				return nil
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("not healthy: %v", err)
		case <-time.After(50 * time.Millisecond):
		}
	}
}

// TestEveryBinaryStartsAnswersHealthAndStopsOnSIGTERM runs each of the eight binaries as a
// process: /healthz, a gRPC health check over h2c, then SIGTERM must end it cleanly.
func TestEveryBinaryStartsAnswersHealthAndStopsOnSIGTERM(t *testing.T) {
	bin := binDir
	addrs, env := suiteEnv(t, t.TempDir())
	for _, name := range services {
		t.Run(name, func(t *testing.T) {
			cmd := exec.Command(filepath.Join(bin, name))
			env := identityEnv(env, name)
			cmd.Dir = ".." // config/persona and config/rules.yaml are found from the repository root
			cmd.Env = env
			logs := &strings.Builder{}
			cmd.Stdout, cmd.Stderr = logs, logs
			if err := cmd.Start(); err != nil {
				t.Fatal(err)
			}
			exited := make(chan error, 1)
			go func() { exited <- cmd.Wait() }()
			defer func() {
				if cmd.ProcessState == nil {
					_ = cmd.Process.Kill()
				}
			}()

			ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
			defer cancel()
			if err := waitHealthy(ctx, addrs[name]); err != nil {
				t.Fatalf("%s: %v\n%s", name, err, logs)
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
			if err := cmd.Process.Signal(syscall.SIGTERM); err != nil {
				t.Fatal(err)
			}
			select {
			case err := <-exited:
				if err != nil {
					t.Fatalf("exit after SIGTERM: %v\n%s", err, logs)
				}
				t.Logf("%s stopped %v after SIGTERM", name, time.Since(start).Round(time.Millisecond))
			case <-time.After(2 * time.Second):
				t.Fatalf("%s still running 2s after SIGTERM\n%s", name, logs)
			}
		})
	}
}

// TestOnlyCloudCompositionRootsLinkProviderSDKs reads the module list of every built binary
// (go version -m): the OpenAI and Anthropic SDKs are linked into coder-order, router-shiro and
// the picoclaw CLI (its embedded suite runs both), and into nothing else.
func TestOnlyCloudCompositionRootsLinkProviderSDKs(t *testing.T) {
	sdks := []string{"github.com/openai/openai-go/", "github.com/anthropics/anthropic-sdk-go"}
	mustLink := map[string]bool{"coder-order": true, "router-shiro": true, "picoclaw": true}
	cli := filepath.Join(t.TempDir(), "picoclaw")
	build := exec.Command("go", "build", "-ldflags=-s -w", "-o", cli, "./cmd/picoclaw")
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
		for _, sdk := range sdks {
			linked := slices.ContainsFunc(deps, func(d string) bool { return strings.HasPrefix(d, sdk) })
			if linked != mustLink[name] {
				t.Errorf("%s links %s: %v, want %v", name, sdk, linked, mustLink[name])
			}
		}
	}
}
