package rules

import (
	"regexp"
	"regexp/syntax"
	"strings"
)

// matcher is one compiled pattern of a rule.
type matcher interface {
	// match reports whether the pattern matches; lower is text in lower case (used by
	// case-insensitive literal matchers) and is computed once per decision.
	match(text string, lower func() string) (string, bool)
}

type regexMatcher struct{ re *regexp.Regexp }

func (m regexMatcher) match(text string, _ func() string) (string, bool) {
	loc := m.re.FindStringIndex(text)
	if loc == nil {
		return "", false
	}
	return text[loc[0]:loc[1]], true
}

// literalMatcher handles patterns that are only alternatives of fixed words (most Japanese
// keyword lists): Go's regexp engine has no multi-literal search, so plain substring tests
// are several times faster and give the same answer.
type literalMatcher struct {
	words []string
	fold  bool
	// wordStart and wordEnd require an ASCII word boundary (\b) before and after the word.
	wordStart, wordEnd bool
}

func (m literalMatcher) match(text string, lower func() string) (string, bool) {
	hay := text
	if m.fold {
		hay = lower()
	}
	for _, w := range m.words {
		for off := 0; off <= len(hay)-len(w); {
			i := strings.Index(hay[off:], w)
			if i < 0 {
				break
			}
			i += off
			if m.boundaries(hay, i, i+len(w)) {
				if len(hay) == len(text) {
					return text[i : i+len(w)], true
				}
				return w, true
			}
			off = i + 1
		}
	}
	return "", false
}

// boundaries checks \b as Go's regexp defines it: ASCII word characters only.
func (m literalMatcher) boundaries(hay string, start, end int) bool {
	if m.wordStart && isWordByte(hay, start-1) == isWordByte(hay, start) {
		return false
	}
	if m.wordEnd && isWordByte(hay, end-1) == isWordByte(hay, end) {
		return false
	}
	return true
}

func isWordByte(s string, i int) bool {
	if i < 0 || i >= len(s) {
		return false
	}
	c := s[i]
	return c == '_' || '0' <= c && c <= '9' || 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z'
}

// maxLiterals bounds the expansion of a pattern into fixed words.
const maxLiterals = 128

// compile returns the fastest matcher for expr with the same matches.
func compile(expr string, caseSensitive bool) (matcher, error) {
	full := expr
	if !caseSensitive {
		full = "(?i)" + expr
	}
	re, err := regexp.Compile(full)
	if err != nil {
		return nil, err
	}
	tree, err := syntax.Parse(full, syntax.Perl)
	if err != nil {
		return regexMatcher{re: re}, nil
	}
	wordStart, wordEnd := false, false
	if tree.Op == syntax.OpConcat && len(tree.Sub) > 2 {
		// \b(word|word)\b: strip the boundaries and check them by hand.
		if tree.Sub[0].Op == syntax.OpWordBoundary {
			wordStart, tree.Sub = true, tree.Sub[1:]
		}
		if last := len(tree.Sub) - 1; tree.Sub[last].Op == syntax.OpWordBoundary {
			wordEnd, tree.Sub = true, tree.Sub[:last]
		}
	}
	words, ok := literals(tree)
	if !ok || len(words) == 0 {
		return regexMatcher{re: re}, nil
	}
	for i, w := range words {
		if w == "" {
			// A pattern that can match the empty string matches everything.
			return regexMatcher{re: re}, nil
		}
		if !caseSensitive {
			words[i] = strings.ToLower(w)
		}
	}
	return literalMatcher{words: words, fold: !caseSensitive, wordStart: wordStart, wordEnd: wordEnd}, nil
}

// literals expands a regexp made only of literals, groups, alternations and optional parts
// into the finite set of strings it matches.
func literals(re *syntax.Regexp) ([]string, bool) {
	switch re.Op {
	case syntax.OpLiteral:
		return []string{string(re.Rune)}, true
	case syntax.OpEmptyMatch:
		return []string{""}, true
	case syntax.OpCapture:
		return literals(re.Sub[0])
	case syntax.OpQuest:
		sub, ok := literals(re.Sub[0])
		if !ok {
			return nil, false
		}
		return append(sub, ""), len(sub)+1 <= maxLiterals
	case syntax.OpAlternate:
		var out []string
		for _, s := range re.Sub {
			sub, ok := literals(s)
			if !ok {
				return nil, false
			}
			out = append(out, sub...)
			if len(out) > maxLiterals {
				return nil, false
			}
		}
		return out, true
	case syntax.OpConcat:
		out := []string{""}
		for _, s := range re.Sub {
			sub, ok := literals(s)
			if !ok || len(out)*len(sub) > maxLiterals {
				return nil, false
			}
			next := make([]string, 0, len(out)*len(sub))
			for _, a := range out {
				for _, b := range sub {
					next = append(next, a+b)
				}
			}
			out = next
		}
		return out, true
	case syntax.OpCharClass:
		// (?i) single letters and small classes such as [sz].
		var out []string
		for i := 0; i+1 < len(re.Rune); i += 2 {
			for r := re.Rune[i]; r <= re.Rune[i+1]; r++ {
				out = append(out, string(r))
				if len(out) > 8 {
					return nil, false
				}
			}
		}
		return out, len(out) > 0
	}
	return nil, false
}
