package deploy

import (
	"strings"
	"testing"

	"github.com/picoclaw-suite/picoclaw/pkg/config"
)

// configEnv is every environment variable a service of the suite reads: PICOCLAW_ + a key path
// of the shared file (upper case, '.' and '-' as '_'), the secrets' own names, and the file's
// path. A misspelt name would be ignored without a word, so the deployments may set no other
// PICOCLAW_ variable.
func configEnv() map[string]bool {
	known := map[string]bool{"PICOCLAW_CONFIG": true}
	for _, line := range strings.Split(config.SuiteSchema().String(), "\n") {
		path, env, secret := strings.Cut(line, "=env:")
		if secret {
			known[env] = true
			continue
		}
		if path == "" || strings.Contains(path, "*") {
			continue
		}
		path = strings.TrimSuffix(path, "[]")
		known[config.EnvPrefix+strings.ToUpper(strings.NewReplacer(".", "_", "-", "_").Replace(path))] = true
	}
	return known
}

// checkEnvNames reports the PICOCLAW_ variables of names that no service reads.
func checkEnvNames(t *testing.T, where string, names []string) {
	t.Helper()
	known := configEnv()
	for _, n := range names {
		if strings.HasPrefix(n, config.EnvPrefix) && !known[n] {
			t.Errorf("%s sets %s, which no service reads", where, n)
		}
	}
}

func TestConfigEnv(t *testing.T) {
	known := configEnv()
	for _, n := range []string{"PICOCLAW_REDIS_ADDR", "PICOCLAW_SERVICES_GATEWAY_LINE_PUBLIC_URL", "PICOCLAW_LINE_ALLOWED_USERS",
		"PICOCLAW_REPLICA_ID", "PICOCLAW_SERVICE_KEY", "REDIS_PASSWORD", "LINE_CHANNEL_SECRET", "PICOCLAW_APPROVAL_TOKENS"} {
		if !known[n] {
			t.Errorf("%s not known", n)
		}
	}
	for _, n := range []string{"PICOCLAW_OLAMA_BASE_URL", "PICOCLAW_REDIS", "PICOCLAW_SERVICES"} {
		if known[n] {
			t.Errorf("%s known", n)
		}
	}
}
