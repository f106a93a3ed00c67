package config

import (
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

type section struct {
	PendingTTL time.Duration `yaml:"pending_ttl"`
	Approvers  []string      `yaml:"approvers"`
	Limit      float64       `yaml:"cost_limit_usd"`
}

type testConfig struct {
	Common   `yaml:",inline"`
	Approval section `yaml:"approval"`
	Token    Secret  `yaml:"-" env:"TEST_API_TOKEN"`
}

func (c *testConfig) Validate() error {
	var errs Errors
	errs.Add(c.Common.Validate())
	if c.Approval.PendingTTL <= 0 {
		errs.Addf("approval.pending_ttl", "must be positive")
	}
	return errs.Err()
}

func env(m map[string]string) LookupFunc {
	return func(k string) (string, bool) { v, ok := m[k]; return v, ok }
}

func TestDecodeAndEnvOverrides(t *testing.T) {
	cfg := testConfig{Common: DefaultCommon(), Approval: section{PendingTTL: 30 * time.Minute}}
	yaml := []byte(`
timezone: UTC
services:
  approval: { listen: ":19004", url: "http://approval:19004" }
approval:
  pending_ttl: 10m
  approvers: [U1]
  sweep_interval: 1m          # read by the approval service, not by this config
executor: {workspace: /srv/w} # a section of another service
`)
	if err := Decode(yaml, &cfg); err != nil {
		t.Fatal(err)
	}
	err := ApplyEnv(&cfg, env(map[string]string{
		"PICOCLAW_APPROVAL_APPROVERS":           "U1, U2 ,,U3",
		"PICOCLAW_APPROVAL_COST_LIMIT_USD":      "2.5",
		"PICOCLAW_SERVICES_GATEWAY_LINE_LISTEN": ":18080",
		"PICOCLAW_HEARTBEAT_INTERVAL_SEC":       "5",
		"TEST_API_TOKEN":                        "tok-123",
		"PICOCLAW_TOKEN":                        "must-not-be-used",
	}))
	if err != nil {
		t.Fatal(err)
	}
	if cfg.TimeZone != "UTC" || cfg.Approval.PendingTTL != 10*time.Minute || cfg.Services.Approval.Listen != ":19004" {
		t.Fatalf("yaml not applied: %+v", cfg)
	}
	if strings.Join(cfg.Approval.Approvers, "|") != "U1|U2|U3" || cfg.Approval.Limit != 2.5 {
		t.Fatalf("env lists/floats not applied: %+v", cfg.Approval)
	}
	if cfg.Services.GatewayLine.Listen != ":18080" || cfg.HeartbeatSender.IntervalSec != 5 {
		t.Fatalf("nested env not applied: %+v", cfg.Services.GatewayLine)
	}
	if cfg.Token.Value() != "tok-123" || cfg.Token.String() != "***" {
		t.Fatalf("secret from env: value=%q string=%q", cfg.Token.Value(), cfg.Token.String())
	}
	if cfg.Services.ChatMio.Listen != "127.0.0.1:9001" {
		t.Fatalf("defaults lost: %+v", cfg.Services.ChatMio)
	}
}

// A secret written in the file is refused, naming the variable it must come from.
func TestSecretsAreNotReadFromYAML(t *testing.T) {
	cfg := testConfig{Common: DefaultCommon()}
	err := Decode([]byte("token: from-file\nredis: {password: hunter2}\n"), &cfg)
	if err == nil || !strings.Contains(err.Error(), "token: secrets are not read from the file; set TEST_API_TOKEN") ||
		!strings.Contains(err.Error(), "redis.password: secrets are not read from the file; set REDIS_PASSWORD") {
		t.Fatalf("err = %v", err)
	}
	if strings.Contains(err.Error(), "hunter2") || strings.Contains(err.Error(), "from-file") {
		t.Fatalf("the error repeats the secret: %v", err)
	}
	if cfg.Token.Set() || cfg.Redis.Password.Set() {
		t.Fatalf("secret read from file: %q", cfg.Token.Value())
	}
}

func TestBadEnvValueNamesKey(t *testing.T) {
	cfg := testConfig{Common: DefaultCommon()}
	err := ApplyEnv(&cfg, env(map[string]string{"PICOCLAW_APPROVAL_PENDING_TTL": "soon"}))
	if err == nil || !strings.Contains(err.Error(), "approval.pending_ttl") || !strings.Contains(err.Error(), "PICOCLAW_APPROVAL_PENDING_TTL") {
		t.Fatalf("err = %v", err)
	}
}

func TestValidateNamesEveryBadKey(t *testing.T) {
	cfg := testConfig{Common: DefaultCommon()}
	cfg.TimeZone = "Mars/Olympus"
	cfg.Locale = "fr"
	cfg.Services.Executor.URL = "executor:9005"
	cfg.HeartbeatSender.TimeoutSec = 10
	err := cfg.Validate()
	if err == nil {
		t.Fatal("want errors")
	}
	for _, key := range []string{"timezone", "locale", "services.executor.url", "heartbeat.timeout_sec", "approval.pending_ttl"} {
		if !strings.Contains(err.Error(), key+":") {
			t.Errorf("error does not name %s: %v", key, err)
		}
	}
	var ke *KeyError
	if !errors.As(err, &ke) {
		t.Errorf("errors.As KeyError failed")
	}
}

func TestLoadFileEnvAndValidate(t *testing.T) {
	path := filepath.Join(t.TempDir(), "c.yaml")
	if err := os.WriteFile(path, []byte("approval:\n  pending_ttl: 0s\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	cfg := testConfig{Common: DefaultCommon()}
	t.Setenv("PICOCLAW_LOCALE", "en")
	err := Load(path, &cfg)
	if err == nil || !strings.Contains(err.Error(), "approval.pending_ttl") {
		t.Fatalf("Load err = %v", err)
	}
	if cfg.Locale != "en" {
		t.Fatalf("env not applied by Load")
	}
	if err := Load(filepath.Join(t.TempDir(), "missing.yaml"), &cfg); err == nil {
		t.Fatal("missing file accepted")
	}
}

func TestExampleFileLoads(t *testing.T) {
	data, err := os.ReadFile("../../config/picoclaw.example.yaml")
	if err != nil {
		t.Fatal(err)
	}
	// Each service decodes its own sections; here the common keys and one approval key.
	var cfg struct {
		Common   `yaml:",inline"`
		Approval struct {
			PendingTTL time.Duration `yaml:"pending_ttl"`
		} `yaml:"approval"`
	}
	cfg.Common = DefaultCommon()
	if err := Decode(data, &cfg); err != nil {
		t.Fatalf("example file does not decode: %v", err)
	}
	if err := cfg.Common.Validate(); err != nil {
		t.Fatalf("example file invalid: %v", err)
	}
	if cfg.Approval.PendingTTL != 30*time.Minute {
		t.Fatalf("example approval.pending_ttl = %v, want the 30m default", cfg.Approval.PendingTTL)
	}
}

func TestPrefix(t *testing.T) {
	var inner Errors
	inner.Addf("listen", "must be set")
	err := Prefix("services.approval", inner.Err())
	if err == nil || !strings.Contains(err.Error(), "services.approval.listen: must be set") {
		t.Fatalf("got %v", err)
	}
}
