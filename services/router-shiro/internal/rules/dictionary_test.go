package rules

import (
	"errors"
	"strings"
	"testing"

	"github.com/picoclaw-suite/picoclaw/services/router-shiro/internal/domain"
)

func TestParse_Errors(t *testing.T) {
	tests := []struct {
		name string
		yaml string
		want []string
	}{
		{"bad regex names the rule", "version: 1\nrules:\n  - {name: ok, route: OPS, pattern: 'a'}\n  - {name: broken, route: OPS, pattern: '(unclosed'}\n",
			[]string{`rule #2 "broken"`, "invalid pattern 1"}},
		{"unknown route names the rule", "version: 1\nrules:\n  - {name: odd, route: DANCE, pattern: 'x'}\n",
			[]string{`rule #1 "odd"`, `unknown route "DANCE"`}},
		{"missing pattern", "version: 1\nrules:\n  - {name: empty, route: CHAT}\n", []string{`"empty"`, "pattern or patterns is required"}},
		{"duplicate name", "version: 1\nrules:\n  - {name: a, route: CHAT, pattern: x}\n  - {name: a, route: CHAT, pattern: y}\n",
			[]string{`rule #2 "a"`, "duplicate name"}},
		{"confidence out of range", "version: 1\nrules:\n  - {name: c, route: CHAT, pattern: x, confidence: 1.5}\n", []string{`"c"`, "confidence"}},
		{"unknown field (typo)", "version: 1\nrules:\n  - {name: t, route: CHAT, patern: x}\n", []string{"patern"}},
		{"wrong version", "version: 2\nrules: []\n", []string{"version must be 1"}},
		{"all problems at once", "version: 1\nrules:\n  - {name: r1, route: NOPE, pattern: x}\n  - {name: r2, route: CHAT, pattern: '['}\n",
			[]string{`"r1"`, `"r2"`}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Parse([]byte(tt.yaml))
			if !errors.Is(err, ErrInvalid) {
				t.Fatalf("err = %v, want ErrInvalid", err)
			}
			for _, w := range tt.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not mention %q", err, w)
				}
			}
		})
	}
}

func TestDecide_PriorityThenFileOrder(t *testing.T) {
	d, err := Parse([]byte(`version: 1
rules:
  - {name: low, route: PLAN, priority: 1, pattern: 'deploy'}
  - {name: first-tie, route: OPS, priority: 5, pattern: 'deploy'}
  - {name: second-tie, route: CODE, priority: 5, pattern: 'deploy'}
  - {name: high-other, route: CHAT, priority: 9, pattern: 'approve'}
`))
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		in        string
		wantRule  string
		wantRoute domain.Route
		wantOK    bool
	}{
		{"deploy it", "first-tie", domain.RouteOps, true},
		{"approve the deploy", "high-other", domain.RouteChat, true},
		{"DEPLOY", "first-tie", domain.RouteOps, true},
		{"nothing here", "", "", false},
	}
	for _, tt := range tests {
		dec, ok := d.Decide(tt.in)
		if ok != tt.wantOK || dec.Matched != tt.wantRule || dec.Route != tt.wantRoute {
			t.Errorf("%q: got %s/%s/%v, want %s/%s/%v", tt.in, dec.Matched, dec.Route, ok, tt.wantRule, tt.wantRoute, tt.wantOK)
		}
	}
	var order []string
	for _, r := range d.Rules() {
		order = append(order, r.Name)
	}
	if got := strings.Join(order, ","); got != "high-other,first-tie,second-tie,low" {
		t.Errorf("evaluation order %s", got)
	}
}

func TestDecide_CaseSensitiveAndPatterns(t *testing.T) {
	d, err := Parse([]byte(`version: 1
rules:
  - name: cs
    route: OPS
    case_sensitive: true
    patterns: ['NGINX', '再起動']
`))
	if err != nil {
		t.Fatal(err)
	}
	for in, want := range map[string]bool{"NGINX down": true, "nginx down": false, "再起動お願い": true} {
		if _, ok := d.Decide(in); ok != want {
			t.Errorf("%q: matched %v, want %v", in, ok, want)
		}
	}
}
