package fault

import (
	"errors"
	"fmt"
	"maps"
	"regexp"
	"slices"
	"sort"
	"strings"
	"unicode"
)

// Catalog is a service's texts for the user about its failures, by code: the Japanese and the
// English form, each an fmt template over the message's arguments, which are strings: %[1]s,
// %[2]s, … (the forms may use them in different orders; Check holds a catalog to that).
type Catalog map[string][2]string

var verb = regexp.MustCompile(`%(\[(\d+)\])?.`)

// Check reports the first code of c whose forms are empty, use a verb other than %[n]s, use
// other arguments than each other, whose Japanese form has no Japanese in it, or that says a
// shared word (States) otherwise.
func (c Catalog) Check() error {
	codes := make([]string, 0, len(c))
	for code := range c {
		codes = append(codes, code)
	}
	sort.Strings(codes)
	for _, code := range codes {
		if shared, ok := States[code]; ok && shared != c[code] {
			return fmt.Errorf("%s: says the shared word %q otherwise", code, shared[0])
		}
		var used [2][]string
		for i, form := range c[code] {
			if strings.TrimSpace(form) == "" {
				return fmt.Errorf("%s: empty form", code)
			}
			for _, m := range verb.FindAllStringSubmatch(form, -1) {
				if m[0] == "%%" {
					continue
				}
				if m[2] == "" || !strings.HasSuffix(m[0], "s") {
					return fmt.Errorf("%s: verb %q: use %%[n]s", code, m[0])
				}
				if !slices.Contains(used[i], m[2]) {
					used[i] = append(used[i], m[2])
				}
			}
			sort.Strings(used[i])
		}
		if !slices.Equal(used[0], used[1]) {
			return fmt.Errorf("%s: the forms use arguments %v and %v", code, used[0], used[1])
		}
		if !strings.ContainsFunc(c[code][0], func(r rune) bool {
			return unicode.In(r, unicode.Hiragana, unicode.Katakana, unicode.Han)
		}) {
			return fmt.Errorf("%s: the Japanese form has no Japanese: %q", code, c[code][0])
		}
	}
	return nil
}

// Message is a failure the user is told about: a stable code — sent to callers as the error's
// reason, with the arguments — and its arguments, which are data (paths, numbers, ids, a
// program's own words) and never words of ours. The catalog that made it says it in the user's
// language (Text); Error is the English form, for logs and the audit log.
type Message struct {
	Code string
	Args []string
	// terms marks the arguments that are words of the catalog (Term).
	terms []bool
	kind  error
	// cause is the failure beneath, for logs: its words are not shown to the user.
	cause error
	cat   Catalog
}

// New makes the message code of c with args. kind is the sentinel the failure is (errors.Is and
// KindOf see it; nil: an unclassified failure, Internal).
func (c Catalog) New(kind error, code string, args ...any) *Message {
	return c.Wrap(kind, nil, code, args...)
}

// Wrap is New over the failure beneath (an I/O error, a library's words): Error names it for the
// log, Text leaves it out.
func (c Catalog) Wrap(kind, cause error, code string, args ...any) *Message {
	m := &Message{Code: code, kind: kind, cause: cause, cat: c}
	for _, a := range args {
		t, isTerm := a.(Term)
		if isTerm {
			m.Args = append(m.Args, string(t))
		} else {
			m.Args = append(m.Args, fmt.Sprint(a))
		}
		m.terms = append(m.terms, isTerm)
	}
	return m
}

// Term is an argument that is itself a word of the catalog — a job's state (States), what
// happened to a file — said in the message's language: the code of an entry without arguments.
type Term string

// Has reports whether c has a text for code (its own, or a shared word of States).
func (c Catalog) Has(code string) bool {
	_, ok := c.lookup(code)
	return ok
}

// ReportUncovered calls errorf (a test's Errorf) once for each of c's own codes, in order, that
// covered does not know: the tests that say every text of a catalog in both languages use it to
// fail on a code added without a case.
func (c Catalog) ReportUncovered(errorf func(format string, args ...any), covered func(code string) bool) {
	for _, code := range slices.Sorted(maps.Keys(c)) {
		if !covered(code) {
			errorf("%s: no case says this text", code)
		}
	}
}

// lookup is the forms of code: c's own, else the shared word of States.
func (c Catalog) lookup(code string) ([2]string, bool) {
	if forms, ok := c[code]; ok {
		return forms, true
	}
	forms, ok := States[code]
	return forms, ok
}

// Text renders code with args in locale (Japanese unless locale is "en…"). A code the catalog
// lacks is named with its arguments rather than dropped.
func (c Catalog) Text(locale, code string, args ...string) string {
	return c.render(locale, code, args, nil)
}

func (c Catalog) render(locale, code string, args []string, terms []bool) string {
	forms, ok := c.lookup(code)
	if !ok {
		return strings.TrimSpace(code + " " + strings.Join(args, " "))
	}
	tmpl := forms[0]
	if English(locale) {
		tmpl = forms[1]
	}
	vals := make([]any, len(args))
	for i, a := range args {
		vals[i] = a
		if i < len(terms) && terms[i] {
			vals[i] = c.render(locale, a, nil, nil)
		}
	}
	return fmt.Sprintf(tmpl, vals...)
}

// English reports whether locale asks for English; every other locale gets Japanese, the
// suite's default.
func English(locale string) bool {
	return strings.HasPrefix(strings.ToLower(strings.TrimSpace(locale)), "en")
}

func (m *Message) Error() string {
	s := m.cat.render("en", m.Code, m.Args, m.terms)
	if m.cause != nil {
		s += ": " + m.cause.Error()
	}
	return s
}

// Unwrap gives the sentinel, then the failure beneath.
func (m *Message) Unwrap() []error {
	var out []error
	for _, e := range []error{m.kind, m.cause} {
		if e != nil {
			out = append(out, e)
		}
	}
	return out
}

// Text is the message in locale.
func (m *Message) Text(locale string) string { return m.cat.render(locale, m.Code, m.Args, m.terms) }

// told is an error with the text a peer gave for the user (google.rpc.LocalizedMessage), in the
// locale the peer was asked for.
type told struct {
	err          error
	locale, text string
}

func (t *told) Error() string { return t.err.Error() }
func (t *told) Unwrap() error { return t.err }

// WithText keeps the text a peer gave for the user about err (in locale) for Text: a service
// that passes a peer's refusal on shows the user the peer's words, not the English beneath.
func WithText(err error, locale, text string) error {
	if err == nil || text == "" {
		return err
	}
	return &told{err: err, locale: locale, text: text}
}

// MessageOf is the first Message in err's chain, or nil.
func MessageOf(err error) *Message {
	var m *Message
	if errors.As(err, &m) {
		return m
	}
	return nil
}

// Text is err as the user is told it in locale: the first Message in its chain, rendered, or
// the text a peer gave (WithText), whichever comes first. ok is false when err has neither: its
// words are not for the user (the caller says something of its own, e.g. Kind.Text).
func Text(err error, locale string) (text string, ok bool) {
	walk(err, func(e error) bool {
		switch x := e.(type) {
		case *Message:
			text, ok = x.Text(locale), true
		case *told:
			text, ok = x.text, true
		}
		return ok
	})
	return text, ok
}

// walk visits err's chain depth first until visit returns true.
func walk(err error, visit func(error) bool) bool {
	if err == nil {
		return false
	}
	if visit(err) {
		return true
	}
	switch u := err.(type) {
	case interface{ Unwrap() error }:
		return walk(u.Unwrap(), visit)
	case interface{ Unwrap() []error }:
		for _, e := range u.Unwrap() {
			if walk(e, visit) {
				return true
			}
		}
	}
	return false
}
