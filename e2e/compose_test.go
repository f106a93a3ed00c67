package e2e

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/compose-spec/compose-go/v2/cli"
	"github.com/compose-spec/compose-go/v2/types"

	"github.com/picoclaw-suite/picoclaw/pkg/svcauth"
)

func loadCompose(root, envFile string) (*types.Project, error) {
	opts, err := cli.NewProjectOptions([]string{filepath.Join(root, "docker-compose.yaml")},
		cli.WithWorkingDirectory(root),
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
// `docker compose config`, with .env.example as the environment.
func TestComposeFileValidates(t *testing.T) {
	root, err := filepath.Abs("..")
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	// The stack reads .env; validate with the documented example.
	example, err := os.ReadFile(filepath.Join(root, ".env.example"))
	if err != nil {
		t.Fatal(err)
	}
	envFile := filepath.Join(dir, ".env")
	if err := os.WriteFile(envFile, example, 0o600); err != nil {
		t.Fatal(err)
	}
	// Without the keys `picoclaw keys` makes, the stack refuses to load and says what is missing.
	if _, err := loadCompose(root, envFile); err == nil || !strings.Contains(err.Error(), "PICOCLAW_SERVICE_KEY_") {
		t.Fatalf("docker-compose.yaml loads without service keys: %v", err)
	}
	keys, err := svcauth.GenerateSuite()
	if err != nil {
		t.Fatal(err)
	}
	lines := "\nPICOCLAW_AUTH_PUBLIC_KEYS=" + strings.Join(svcauth.PublicEntries(keys), ",") + "\n"
	for _, id := range svcauth.Identities() {
		lines += "PICOCLAW_SERVICE_KEY_" + strings.ToUpper(strings.ReplaceAll(id, "-", "_")) + "=" + keys[id].Private + "\n"
	}
	if err := os.WriteFile(envFile, append(example, lines...), 0o600); err != nil {
		t.Fatal(err)
	}
	project, err := loadCompose(root, envFile)
	if err != nil {
		t.Fatalf("docker-compose.yaml does not validate: %v", err)
	}
	for _, name := range append([]string{"redis", "postgres", "jaeger"}, services...) {
		svc, ok := project.Services[name]
		if !ok {
			t.Errorf("service %s missing", name)
			continue
		}
		if svc.HealthCheck == nil {
			t.Errorf("service %s has no healthcheck", name)
		}
	}
	for _, name := range services {
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
	}
	// The build resolves the workspace before the sources are copied: every module go.work
	// uses must have its go.mod copied first, or the image build fails.
	dockerfile, err := os.ReadFile(filepath.Join(root, "deploy", "Dockerfile"))
	if err != nil {
		t.Fatal(err)
	}
	work, err := os.ReadFile(filepath.Join(root, "go.work"))
	if err != nil {
		t.Fatal(err)
	}
	download := strings.Index(string(dockerfile), "go mod download")
	for _, line := range strings.Split(string(work), "\n") {
		mod, ok := strings.CutPrefix(strings.TrimSpace(line), "./")
		if !ok {
			continue
		}
		i := strings.Index(string(dockerfile), "COPY "+mod+"/go.mod ")
		if i < 0 || download < 0 || i > download {
			t.Errorf("deploy/Dockerfile does not copy %s/go.mod before go mod download", mod)
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
