// Package rules is the rule dictionary of the routing decision (SPEC §4 step 2): prioritised
// regular expressions loaded from YAML, validated and compiled once at start.
package rules

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"gopkg.in/yaml.v3"

	"github.com/picoclaw-suite/picoclaw/services/router-shiro/internal/domain"
)

// ErrInvalid marks a dictionary that cannot be used; the message names the rule.
var ErrInvalid = errors.New("invalid rule dictionary")

// file is the YAML shape of config/rules.yaml.
type file struct {
	Version int        `yaml:"version"`
	Rules   []ruleSpec `yaml:"rules"`
}

type ruleSpec struct {
	Name       string   `yaml:"name"`
	Route      string   `yaml:"route"`
	Priority   int      `yaml:"priority"`
	Confidence *float64 `yaml:"confidence"`
	Evidence   string   `yaml:"evidence"`
	Pattern    string   `yaml:"pattern"`
	// Patterns is a list of alternatives; the rule matches when any matches. Separate
	// expressions (e.g. one for Japanese words, one for English words with \b) run faster in
	// Go's engine than one large alternation.
	Patterns []string `yaml:"patterns"`
	// CaseSensitive turns off the default (?i).
	CaseSensitive bool   `yaml:"case_sensitive"`
	Description   string `yaml:"description"`
}

// Rule is one compiled rule.
type Rule struct {
	Name       string
	Route      domain.Route
	Priority   int
	Confidence float64
	Evidence   string
	Patterns   []string
	matchers   []matcher
}

// Match reports whether the rule matches text and returns the matched snippet.
func (r *Rule) Match(text string) (string, bool) {
	return r.match(text, lowerOnce(text))
}

func (r *Rule) match(text string, lower func() string) (string, bool) {
	for _, m := range r.matchers {
		if s, ok := m.match(text, lower); ok {
			return s, true
		}
	}
	return "", false
}

// lowerOnce lower-cases text the first time a case-insensitive literal matcher asks.
func lowerOnce(text string) func() string {
	var lower string
	done := false
	return func() string {
		if !done {
			lower, done = strings.ToLower(text), true
		}
		return lower
	}
}

// Dictionary is an ordered, immutable set of rules: priority descending, then file order.
type Dictionary struct {
	rules []*Rule
}

// Parse reads and validates a dictionary. Every problem is reported with the rule's position
// and name, all at once.
func Parse(data []byte) (*Dictionary, error) {
	dec := yaml.NewDecoder(bytes.NewReader(data))
	dec.KnownFields(true)
	var f file
	if err := dec.Decode(&f); err != nil && !errors.Is(err, io.EOF) {
		return nil, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	if f.Version != 1 {
		return nil, fmt.Errorf("%w: version must be 1, got %d", ErrInvalid, f.Version)
	}
	var errs []error
	seen := map[string]int{}
	d := &Dictionary{}
	for i, s := range f.Rules {
		ref := fmt.Sprintf("rule #%d %q", i+1, s.Name)
		bad := func(format string, args ...any) {
			errs = append(errs, fmt.Errorf("%s: %s", ref, fmt.Sprintf(format, args...)))
		}
		if strings.TrimSpace(s.Name) == "" {
			bad("name is required")
		} else if j, dup := seen[s.Name]; dup {
			bad("duplicate name (first used by rule #%d)", j)
		} else {
			seen[s.Name] = i + 1
		}
		route, err := domain.ParseRoute(s.Route)
		if err != nil {
			bad("unknown route %q (want one of %s)", s.Route, routeList())
		}
		conf := 0.9
		if s.Confidence != nil {
			conf = *s.Confidence
		}
		if conf <= 0 || conf > 1 {
			bad("confidence must be in (0,1], got %g", conf)
		}
		patterns := s.Patterns
		if s.Pattern != "" {
			patterns = append([]string{s.Pattern}, patterns...)
		}
		if len(patterns) == 0 {
			bad("pattern or patterns is required")
		}
		var matchers []matcher
		for j, p := range patterns {
			if strings.TrimSpace(p) == "" {
				bad("pattern %d is empty", j+1)
				continue
			}
			m, err := compile(p, s.CaseSensitive)
			if err != nil {
				bad("invalid pattern %d: %v", j+1, err)
				continue
			}
			matchers = append(matchers, m)
		}
		evidence := s.Evidence
		if evidence == "" {
			evidence = s.Name
		}
		d.rules = append(d.rules, &Rule{Name: s.Name, Route: route, Priority: s.Priority, Confidence: conf,
			Evidence: evidence, Patterns: patterns, matchers: matchers})
	}
	if len(errs) > 0 {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, errors.Join(errs...))
	}
	sort.SliceStable(d.rules, func(a, b int) bool { return d.rules[a].Priority > d.rules[b].Priority })
	return d, nil
}

func routeList() string {
	var names []string
	for _, r := range domain.Routes() {
		names = append(names, string(r))
	}
	return strings.Join(names, ", ")
}

// Rules returns the rules in evaluation order.
func (d *Dictionary) Rules() []*Rule { return append([]*Rule(nil), d.rules...) }

// Len is the number of rules.
func (d *Dictionary) Len() int { return len(d.rules) }

const snippetRunes = 60

// Decide returns the decision of the first matching rule in evaluation order.
func (d *Dictionary) Decide(text string) (domain.Decision, bool) {
	lower := lowerOnce(text)
	for _, r := range d.rules {
		snippet, ok := r.match(text, lower)
		if !ok {
			continue
		}
		if rs := []rune(snippet); len(rs) > snippetRunes {
			snippet = string(rs[:snippetRunes]) + "…"
		}
		return domain.Decision{
			Route:      r.Route,
			Source:     domain.SourceRule,
			Confidence: r.Confidence,
			Reason:     fmt.Sprintf("rule %s matched %q", r.Name, snippet),
			Evidence:   []string{r.Evidence},
			Matched:    r.Name,
		}, true
	}
	return domain.Decision{}, false
}
