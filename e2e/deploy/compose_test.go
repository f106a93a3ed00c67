package deploy

import (
	"context"
	"io/fs"
	"maps"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/compose-spec/compose-go/v2/cli"
	"github.com/compose-spec/compose-go/v2/types"
	"github.com/moby/patternmatcher"
	"github.com/moby/patternmatcher/ignorefile"

	"github.com/picoclaw-suite/picoclaw/pkg/svcauth"
)

const root = "../.."

// digestPinned is an image reference that names its content: the tag beside the digest is
// only for people.
var digestPinned = regexp.MustCompile(`@sha256:[0-9a-f]{64}$`)

// composeSecrets says which of .env's secrets each service reads; a container gets those and
// no other (docker-compose.yaml hands out no env_file).
var composeSecrets = map[string][]string{
	svcauth.GatewayLine:  {"REDIS_PASSWORD", "LINE_CHANNEL_SECRET", "LINE_CHANNEL_ACCESS_TOKEN", "PICOCLAW_APPROVAL_TOKENS"},
	svcauth.GatewaySlack: {"REDIS_PASSWORD", "SLACK_SIGNING_SECRET", "SLACK_BOT_TOKEN", "PICOCLAW_APPROVAL_TOKENS"},
	svcauth.ChatMio:      {"REDIS_PASSWORD"},
	svcauth.RouterShiro:  nil,
	svcauth.CoderOrder:   {"OPENAI_API_KEY", "DEEPSEEK_API_KEY", "ANTHROPIC_API_KEY"},
	svcauth.Approval: {"REDIS_PASSWORD", "PICOCLAW_AUDIT_KEY", "PICOCLAW_AUDIT_OLD_KEYS", "PICOCLAW_APPROVAL_TOKENS",
		"PICOCLAW_POSTGRES_DSN", "PICOCLAW_POSTGRES_MIGRATE_DSN"},
	svcauth.Executor:  nil,
	svcauth.Heartbeat: {"REDIS_PASSWORD"},
}

// secretNames are the variables of .env.example that are secrets (besides the service keys).
var secretNames = []string{"REDIS_PASSWORD", "LINE_CHANNEL_SECRET", "LINE_CHANNEL_ACCESS_TOKEN", "SLACK_SIGNING_SECRET",
	"SLACK_BOT_TOKEN", "OPENAI_API_KEY", "DEEPSEEK_API_KEY", "ANTHROPIC_API_KEY", "PICOCLAW_AUDIT_KEY", "PICOCLAW_AUDIT_OLD_KEYS",
	"PICOCLAW_APPROVAL_TOKENS", "PICOCLAW_TOKEN", "POSTGRES_PASSWORD", "POSTGRES_APP_PASSWORD", "PICOCLAW_POSTGRES_DSN",
	"PICOCLAW_POSTGRES_MIGRATE_DSN"}

func loadCompose(envFile string) (*types.Project, error) {
	dir, err := filepath.Abs(root)
	if err != nil {
		return nil, err
	}
	opts, err := cli.NewProjectOptions([]string{filepath.Join(dir, "docker-compose.yaml")},
		cli.WithWorkingDirectory(dir),
		cli.WithEnvFiles(envFile),
		cli.WithDotEnv,
		cli.WithName("picoclaw"),
	)
	if err != nil {
		return nil, err
	}
	return opts.LoadProject(context.Background())
}

// TestComposeFileValidates loads docker-compose.yaml with compose-go, the loader behind
// `docker compose config`, with .env.example and what the README says to add as the
// environment, and checks what the stack promises: images pinned by digest, ports on the
// loopback only, Redis behind its password, each container with only its own secrets, Ollama
// on the host reachable, the executor's volumes writable by the services' user.
func TestComposeFileValidates(t *testing.T) {
	example, err := os.ReadFile(filepath.Join(root, ".env.example"))
	if err != nil {
		t.Fatal(err)
	}
	envFile := filepath.Join(t.TempDir(), ".env")
	load := func(extra string) (*types.Project, error) {
		if err := os.WriteFile(envFile, append(slices.Clone(example), extra...), 0o600); err != nil {
			t.Fatal(err)
		}
		return loadCompose(envFile)
	}
	const redisPassword = "redis-password-0123456789abcdef0123456789"
	// Without the keys `picoclaw keys` makes, or without a Redis password, the stack refuses
	// to load and says what is missing.
	if _, err := load("\nREDIS_PASSWORD=" + redisPassword + "\n"); err == nil || !strings.Contains(err.Error(), "PICOCLAW_SERVICE_KEY_") {
		t.Fatalf("docker-compose.yaml loads without service keys: %v", err)
	}
	keys, err := svcauth.GenerateSuite()
	if err != nil {
		t.Fatal(err)
	}
	keyLines := "\nPICOCLAW_AUTH_PUBLIC_KEYS=" + strings.Join(svcauth.PublicEntries(keys), ",") + "\n"
	for _, id := range svcauth.Identities() {
		keyLines += "PICOCLAW_SERVICE_KEY_" + strings.ToUpper(strings.ReplaceAll(id, "-", "_")) + "=" + keys[id].Private + "\n"
	}
	if _, err := load(keyLines); err == nil || !strings.Contains(err.Error(), "REDIS_PASSWORD") {
		t.Fatalf("docker-compose.yaml loads without a Redis password: %v", err)
	}
	project, err := load(keyLines + "REDIS_PASSWORD=" + redisPassword + "\n")
	if err != nil {
		t.Fatalf("docker-compose.yaml does not validate: %v", err)
	}
	for _, name := range append([]string{"redis", "postgres", "jaeger"}, svcauth.Services()...) {
		svc, ok := project.Services[name]
		if !ok {
			t.Errorf("service %s missing", name)
			continue
		}
		if svc.HealthCheck == nil {
			t.Errorf("service %s has no healthcheck", name)
		}
		if svc.Build == nil && !digestPinned.MatchString(svc.Image) {
			t.Errorf("service %s: image %q is not pinned by digest", name, svc.Image)
		}
		for _, p := range svc.Ports {
			if p.HostIP != "127.0.0.1" {
				t.Errorf("service %s publishes %d on %q, not on 127.0.0.1", name, p.Target, p.HostIP)
			}
		}
		if len(svc.EnvFiles) != 0 {
			t.Errorf("service %s reads env files %v: .env would hand it every service's secrets", name, svc.EnvFiles)
		}
	}
	redis := project.Services["redis"]
	if cmd := strings.Join(redis.Command, " "); !strings.Contains(cmd, "--requirepass") || !strings.Contains(cmd, "$REDIS_PASSWORD") {
		t.Errorf("redis runs without requirepass: %q", cmd)
	}
	if v := redis.Environment["REDIS_PASSWORD"]; v == nil || *v != redisPassword {
		t.Errorf("redis's REDIS_PASSWORD = %v", v)
	}
	if v := redis.Environment["REDISCLI_AUTH"]; v == nil || *v != redisPassword {
		t.Errorf("the redis healthcheck's redis-cli has no password (REDISCLI_AUTH = %v)", v)
	}
	for _, name := range svcauth.Services() {
		svc := project.Services[name]
		if svc.Build == nil || svc.Build.Dockerfile != "deploy/Dockerfile" || svc.Build.Args["SERVICE"] == nil || *svc.Build.Args["SERVICE"] != name {
			t.Errorf("%s is not built from deploy/Dockerfile with SERVICE=%s", name, name)
		}
		if cond, ok := svc.DependsOn["postgres"]; !ok || cond.Condition != "service_healthy" {
			t.Errorf("%s does not wait for a healthy postgres", name)
		}
		if _, err := os.Stat(filepath.Join(root, "services", name, "cmd", name)); err != nil {
			t.Errorf("%s: the Dockerfile builds ./services/%s/cmd/%s: %v", name, name, name, err)
		}
		if got := svc.ExtraHosts["host.docker.internal"]; !slices.Contains(got, "host-gateway") {
			t.Errorf("%s cannot reach Ollama on a Linux host: extra_hosts %v", name, svc.ExtraHosts)
		}
		env := func(k string) string {
			if v := svc.Environment[k]; v != nil {
				return *v
			}
			return ""
		}
		if env("PICOCLAW_SERVICE_KEY") != keys[name].Private {
			t.Errorf("%s does not get its own PICOCLAW_SERVICE_KEY", name)
		}
		// A setting comes from .env; one .env leaves unset stays unset (the default holds).
		if env("PICOCLAW_TIMEZONE") != "Asia/Tokyo" || env("PICOCLAW_AUTH_PUBLIC_KEYS") != strings.Join(svcauth.PublicEntries(keys), ",") {
			t.Errorf("%s: settings from .env not passed: timezone %q", name, env("PICOCLAW_TIMEZONE"))
		}
		if v, set := svc.Environment["PICOCLAW_LINE_API_BASE_URL"]; set && v != nil {
			t.Errorf("%s: PICOCLAW_LINE_API_BASE_URL = %q although .env leaves it unset", name, *v)
		}
		checkEnvNames(t, name, slices.Collect(maps.Keys(svc.Environment)))
		for k, v := range svc.Environment {
			if v == nil {
				continue
			}
			for _, id := range svcauth.Identities() {
				if id != name && *v == keys[id].Private {
					t.Errorf("%s gets %s's private key in %s", name, id, k)
				}
			}
			if slices.Contains(secretNames, k) && !slices.Contains(composeSecrets[name], k) {
				t.Errorf("%s gets the secret %s, which it does not read", name, k)
			}
		}
		if slices.Contains(composeSecrets[name], "REDIS_PASSWORD") && env("REDIS_PASSWORD") != redisPassword {
			t.Errorf("%s uses Redis without its password", name)
		}
	}
	// The executor's workspace and state: named volumes unless .env names host directories.
	for _, v := range project.Services[svcauth.Executor].Volumes {
		if (v.Target == "/workspace" || v.Target == "/executor-state") && v.Type != types.VolumeTypeVolume {
			t.Errorf("executor %s is a %s of %s: a directory Docker creates for it belongs to root", v.Target, v.Type, v.Source)
		}
	}
	j := project.Services["jaeger"]
	ports := map[uint32]bool{}
	for _, p := range j.Ports {
		ports[p.Target] = true
	}
	if !ports[16686] || !ports[4318] {
		t.Errorf("jaeger ports: %+v", j.Ports)
	}
}

// TestDockerfile checks the one image definition: every base pinned by digest, the workspace's
// modules resolved before the sources are copied, a non-root user, and the build arguments
// compose passes.
func TestDockerfile(t *testing.T) {
	b, err := os.ReadFile(filepath.Join(root, "deploy", "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	dockerfile := string(b)
	stages := map[string]bool{}
	froms := 0
	for _, line := range strings.Split(dockerfile, "\n") {
		f := strings.Fields(line)
		if len(f) < 2 || f[0] != "FROM" {
			continue
		}
		froms++
		image := f[1]
		// A stage of this file (the runtime is chosen by RUNTIME) needs no digest.
		if !strings.Contains(image, "${") && !stages[image] && !digestPinned.MatchString(image) {
			t.Errorf("FROM %s is not pinned by digest", image)
		}
		if len(f) >= 4 && strings.EqualFold(f[2], "AS") {
			stages[f[3]] = true
		}
	}
	if froms < 4 {
		t.Errorf("only %d FROM lines", froms)
	}
	for _, want := range []string{"ARG SERVICE", "USER 65532:65532", "CGO_ENABLED=0 go build -tags serveronly -trimpath", `-ldflags="-s -w`} {
		if !strings.Contains(dockerfile, want) {
			t.Errorf("deploy/Dockerfile lacks %q", want)
		}
	}
	// The build resolves the workspace before the sources are copied: every module go.work
	// uses must have its go.mod copied first, or the image build fails.
	work, err := os.ReadFile(filepath.Join(root, "go.work"))
	if err != nil {
		t.Fatal(err)
	}
	download := strings.Index(dockerfile, "go mod download")
	for _, line := range strings.Split(string(work), "\n") {
		mod, ok := strings.CutPrefix(strings.TrimSpace(line), "./")
		if !ok {
			continue
		}
		i := strings.Index(dockerfile, "COPY "+mod+"/go.mod ")
		if i < 0 || download < 0 || i > download {
			t.Errorf("deploy/Dockerfile does not copy %s/go.mod before go mod download", mod)
		}
	}
}

// TestDockerignore checks that the build context holds everything the Dockerfile copies and
// none of the secrets, data or build output lying in a working copy.
func TestDockerignore(t *testing.T) {
	f, err := os.Open(filepath.Join(root, ".dockerignore"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	patterns, err := ignorefile.ReadAll(f)
	if err != nil {
		t.Fatal(err)
	}
	pm, err := patternmatcher.New(patterns)
	if err != nil {
		t.Fatal(err)
	}
	excluded := func(path string) bool {
		t.Helper()
		ok, err := pm.MatchesOrParentMatches(path)
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	b, err := os.ReadFile(filepath.Join(root, "deploy", "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	var sources []string
	for _, line := range strings.Split(string(b), "\n") {
		f := strings.Fields(line)
		if len(f) < 3 || f[0] != "COPY" || strings.HasPrefix(f[1], "--from=") {
			continue
		}
		sources = append(sources, f[1:len(f)-1]...)
	}
	if len(sources) < 10 {
		t.Fatalf("found only %d COPY sources in deploy/Dockerfile", len(sources))
	}
	for _, src := range sources {
		src = strings.TrimSuffix(src, "/")
		err := filepath.WalkDir(filepath.Join(root, src), func(path string, d fs.DirEntry, err error) error {
			if err != nil || d.IsDir() {
				return err
			}
			rel, err := filepath.Rel(root, path)
			if err != nil {
				return err
			}
			if excluded(rel) && !strings.HasSuffix(rel, "_test.go") {
				t.Errorf(".dockerignore leaves out %s, which deploy/Dockerfile copies", rel)
			}
			return nil
		})
		if err != nil {
			t.Errorf("COPY %s: %v", src, err)
		}
	}
	for _, secret := range []string{".env", "services/executor/.env", ".git/config", "bin/chat-mio", "data/audit.db", "workspace/README.md",
		"executor-state/workspace.lock", ".tmp/images/index.json", "deploy/k8s/overlays/production/secrets/approval.env", "pkg/llm/llm.test"} {
		if !excluded(secret) {
			t.Errorf(".dockerignore sends %s into the build context", secret)
		}
	}
}
