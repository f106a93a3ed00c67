package config

import (
	"errors"
	"strings"
	"testing"
	"time"
)

type scope struct {
	Tasks []string `yaml:"tasks"`
	Paths []string `yaml:"paths"`
}

type autoApprove struct {
	Enabled      bool          `yaml:"enabled"`
	MaxTTL       time.Duration `yaml:"max_ttl"`
	DefaultScope scope         `yaml:"default_scope"`
}

type server struct {
	Name string `yaml:"name"`
	Port int    `yaml:"port"`
}

type price struct {
	Input  float64 `yaml:"input_per_mtok"`
	Output float64 `yaml:"output_per_mtok"`
}

type strictConfig struct {
	Common   `yaml:",inline"`
	Approval struct {
		PendingTTL  time.Duration `yaml:"pending_ttl"`
		Approvers   []string      `yaml:"approvers"`
		AutoApprove autoApprove   `yaml:"auto_approve"`
		Key         Secret        `yaml:"-" env:"TEST_AUDIT_KEY"`
	} `yaml:"approval"`
	Servers []server         `yaml:"servers"`
	Prices  map[string]price `yaml:"prices"`
	Tools   map[string]string
	Legacy  *server `yaml:"legacy"`
	// Own is read inside the heartbeat section, which Common owns.
	Own string `yaml:"-" config:"heartbeat.admin_session"`
}

func (c *strictConfig) Validate() error { return nil }

func newStrict() strictConfig {
	c := strictConfig{Common: DefaultCommon(), Prices: map[string]price{"base": {Input: 1, Output: 2}}}
	c.Approval.PendingTTL = 30 * time.Minute
	c.Approval.AutoApprove.MaxTTL = 24 * time.Hour
	return c
}

// keyErrors decodes text into a fresh strictConfig (with other, when set, as the keys other
// services read) and returns the problems by key path.
func keyErrors(t *testing.T, text string, other *Schema) (strictConfig, map[string]string) {
	t.Helper()
	cfg := newStrict()
	err := DecodeWith([]byte(text), &cfg, other)
	got := map[string]string{}
	if err == nil {
		return cfg, got
	}
	for _, e := range flattenErrs(err) {
		var ke *KeyError
		if !errors.As(e, &ke) {
			t.Fatalf("a problem without its key: %v", e)
		}
		got[ke.Key] = ke.Msg
	}
	return cfg, got
}

func flattenErrs(err error) []error {
	if j, ok := err.(interface{ Unwrap() []error }); ok {
		var out []error
		for _, e := range j.Unwrap() {
			out = append(out, flattenErrs(e)...)
		}
		return out
	}
	return []error{err}
}

func TestStrictDecodeNamesEveryProblemByPath(t *testing.T) {
	for _, tc := range []struct {
		name, yaml string
		want       map[string]string // key path → message prefix
	}{
		{"unknown key at depth, with the key meant",
			"approval:\n  auto_approve:\n    default_scop: {tasks: [docs]}\n",
			map[string]string{"approval.auto_approve.default_scop": "unknown key; did you mean default_scope? (line 3)"}},
		{"mistyped section",
			"aproval: {pending_ttl: 5m}\n",
			map[string]string{"aproval": "unknown key; did you mean approval?"}},
		{"dash for underscore",
			"services:\n  gateway_line: {listen: ':1'}\n",
			map[string]string{"services.gateway_line": "unknown key; did you mean gateway-line?"}},
		{"key in the wrong section",
			"pending_ttl: 5m\n",
			map[string]string{"pending_ttl": "unknown key; did you mean approval.pending_ttl?"}},
		{"no suggestion when nothing is close",
			"approval: {frobnicate: 1}\n",
			map[string]string{"approval.frobnicate": "unknown key (line 1)"}},
		{"type error names the path, not only the line",
			"approval:\n  auto_approve:\n    max_ttl: [1, 2]\n",
			map[string]string{"approval.auto_approve.max_ttl": "want a duration, got [1 2] (line 3)"}},
		{"a number for a duration",
			"approval: {pending_ttl: 30}\n",
			map[string]string{"approval.pending_ttl": "want a duration, got 30"}},
		{"a string for a number",
			"http: {max_conns: lots}\n",
			map[string]string{"http.max_conns": `want an integer, got "lots"`}},
		{"a mapping for a list",
			"approval: {approvers: {a: 1}}\n",
			map[string]string{"approval.approvers": "want a list of strings, got {a: 1}"}},
		{"a list item of the wrong type",
			"approval: {approvers: [U1, {a: 1}]}\n",
			map[string]string{"approval.approvers[1]": "want a string, got {a: 1}"}},
		{"a scalar for a section",
			"approval: soon\n",
			map[string]string{"approval": `want a mapping, got "soon"`}},
		{"unknown key in a list of mappings",
			"servers:\n  - {name: a, port: 1}\n  - {nme: b, port: x}\n",
			map[string]string{"servers[1].nme": "unknown key; did you mean name?", "servers[1].port": `want an integer, got "x"`}},
		{"unknown key in a mapping's value",
			"prices:\n  gpt-4o: {input_per_mtok: 2.5, output_per_mtk: 10}\n",
			map[string]string{"prices.gpt-4o.output_per_mtk": "unknown key; did you mean output_per_mtok?"}},
		{"a map value of the wrong type",
			"tools: {click: [1]}\n",
			map[string]string{"tools.click": "want a string, got [1]"}},
		{"a key written twice",
			"locale: ja\nlocale: en\n",
			map[string]string{"locale": "written twice (lines 1 and 2)"}},
		{"a secret in the file",
			"approval: {key: abc}\n",
			map[string]string{"approval.key": "secrets are not read from the file; set TEST_AUDIT_KEY"}},
		{"several problems at once",
			"timezon: UTC\nhttp: {max_conns: x}\nservers: [{port: y}]\n",
			map[string]string{"timezon": "unknown key; did you mean timezone?", "http.max_conns": "want an integer", "servers[0].port": "want an integer"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, got := keyErrors(t, tc.yaml, nil)
			if len(got) != len(tc.want) {
				t.Errorf("got %d problems, want %d: %v", len(got), len(tc.want), got)
			}
			for key, prefix := range tc.want {
				if m, ok := got[key]; !ok || !strings.HasPrefix(m, prefix) {
					t.Errorf("%s: got %q, want it to start with %q (all: %v)", key, m, prefix, got)
				}
			}
		})
	}
}

func TestStrictDecodeKeepsDefaultsAndReadsValues(t *testing.T) {
	cfg, problems := keyErrors(t, `
defaults: &d {name: base, port: 80}
approval:
  approvers: [U1, U2]
  auto_approve: {enabled: true}
servers:
  - {<<: *d, port: 8080}
prices:
  gpt: {input_per_mtok: 2.5}
tools: {click: chrome_click}
legacy: {name: old}
heartbeat: {interval_sec: 5, admin_session: "line:Uadmin"}
`, SchemaOf(struct {
		Defaults server `yaml:"defaults"`
	}{}))
	if len(problems) > 0 {
		t.Fatal(problems)
	}
	if cfg.Approval.PendingTTL != 30*time.Minute || cfg.Approval.AutoApprove.MaxTTL != 24*time.Hour || cfg.Locale != "ja" {
		t.Errorf("defaults lost: %+v", cfg.Approval)
	}
	if !cfg.Approval.AutoApprove.Enabled || strings.Join(cfg.Approval.Approvers, ",") != "U1,U2" {
		t.Errorf("values not read: %+v", cfg.Approval)
	}
	if len(cfg.Servers) != 1 || cfg.Servers[0] != (server{Name: "base", Port: 8080}) {
		t.Errorf("merge key: %+v", cfg.Servers)
	}
	if cfg.Prices["base"].Input != 1 || cfg.Prices["gpt"].Input != 2.5 {
		t.Errorf("a mapping adds to the defaults' entries: %+v", cfg.Prices)
	}
	if cfg.Tools["click"] != "chrome_click" || cfg.Legacy == nil || cfg.Legacy.Name != "old" {
		t.Errorf("map or pointer: %+v %+v", cfg.Tools, cfg.Legacy)
	}
	if cfg.Own != "line:Uadmin" || cfg.HeartbeatSender.IntervalSec != 5 {
		t.Errorf("a key claimed inside another field's section: own=%q sender=%+v", cfg.Own, cfg.HeartbeatSender)
	}
}

// A key another service reads is left to it, but what is below it is still checked against
// what that service reads.
func TestStrictDecodeLeavesOtherServicesKeys(t *testing.T) {
	other := ParseSchema("executor.workspace\nexecutor.sandbox.limits.cpu_seconds\napproval.sweep_interval\nexecutor.token=env:EXEC_TOKEN\n")
	_, got := keyErrors(t, `
executor:
  workspace: /w
  sandbox: {limits: {cpu_secnds: 1}}
  token: x
approval: {sweep_interval: 1m}
`, other)
	want := map[string]string{
		"executor.sandbox.limits.cpu_secnds": "unknown key; did you mean cpu_seconds?",
		"executor.token":                     "secrets are not read from the file; set EXEC_TOKEN",
	}
	if len(got) != len(want) {
		t.Fatalf("got %v, want %v", got, want)
	}
	for k, prefix := range want {
		if !strings.HasPrefix(got[k], prefix) {
			t.Errorf("%s: %q", k, got[k])
		}
	}
}

func TestStrictDecodeEmptyAndNull(t *testing.T) {
	for _, text := range []string{"", "# only a comment\n", "approval:\n", "~\n"} {
		cfg, got := keyErrors(t, text, nil)
		if len(got) > 0 || cfg.Approval.PendingTTL != 30*time.Minute {
			t.Errorf("%q: %v %+v", text, got, cfg.Approval)
		}
	}
	cfg := newStrict()
	if err := DecodeWith([]byte("- a\n- b\n"), &cfg, nil); err == nil || !strings.Contains(err.Error(), "mapping of keys") {
		t.Errorf("a list for the file: %v", err)
	}
}

func TestSchemaRoundTrip(t *testing.T) {
	s := SchemaOf(&strictConfig{})
	text := s.String()
	for _, line := range []string{"approval.auto_approve.default_scope.tasks[]", "servers[].name", "prices.*.input_per_mtok",
		"approval.key=env:TEST_AUDIT_KEY", "heartbeat.admin_session", "tools.*", "redis.password=env:REDIS_PASSWORD"} {
		if !strings.Contains(text, line+"\n") {
			t.Errorf("schema lacks %q:\n%s", line, text)
		}
	}
	if again := ParseSchema(text).String(); again != text {
		t.Errorf("round trip changed the schema:\n%s\nvs\n%s", text, again)
	}
}

func TestEditDistance(t *testing.T) {
	for _, tc := range []struct {
		a, b string
		want int
	}{{"", "", 0}, {"default_scop", "default_scope", 1}, {"kitten", "sitting", 3}, {"ab", "ba", 2}, {"日本", "日本語", 1}} {
		if got := editDistance(tc.a, tc.b); got != tc.want {
			t.Errorf("editDistance(%q, %q) = %d, want %d", tc.a, tc.b, got, tc.want)
		}
	}
}

func TestEffectiveMasksSecretsAndDecodesAgain(t *testing.T) {
	cfg := newStrict()
	cfg.Approval.Key = "audit-key-that-must-not-show-0123456789"
	cfg.Redis.Password = "hunter2hunter2"
	cfg.Services.Approval.PublicURL = "http://admin:s3cretpass@127.0.0.1:8090"
	cfg.Own = "line:Uadmin"
	cfg.Servers = []server{{Name: "a", Port: 1}}
	out, err := Effective(&cfg, &testConfig{Common: DefaultCommon()})
	if err != nil {
		t.Fatal(err)
	}
	text := string(out)
	for _, leak := range []string{"audit-key-that-must-not-show", "hunter2", "s3cretpass"} {
		if strings.Contains(text, leak) {
			t.Errorf("secret %q printed:\n%s", leak, text)
		}
	}
	for _, want := range []string{"password=*** (REDIS_PASSWORD)", "key=*** (TEST_AUDIT_KEY)", "token=not set (TEST_API_TOKEN)",
		"admin_session: line:Uadmin", "max_ttl: 24h0m0s", "pending_ttl: 30m0s"} {
		if !strings.Contains(text, want) {
			t.Errorf("output lacks %q:\n%s", want, text)
		}
	}
	if strings.Count(text, "\ntimezone:")+strings.Count(text[:9], "timezone:") != 1 {
		t.Errorf("the shared keys must appear once:\n%s", text)
	}
	again := newStrict()
	if err := DecodeWith(out, &again, SchemaOf(&testConfig{})); err != nil {
		t.Fatalf("the printed configuration does not decode: %v\n%s", err, text)
	}
	if again.Own != "line:Uadmin" || again.Servers[0].Name != "a" {
		t.Errorf("values lost in the round trip: %+v", again)
	}
}
