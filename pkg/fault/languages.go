package fault

import (
	"fmt"
	"regexp"
	"slices"
	"sort"
	"strings"
	"unicode"
)

// token is a run of what English words, commands, keys and flags are made of.
var token = regexp.MustCompile(`[A-Za-z0-9_\-./:$=@*+]+`)

// letters are two ASCII letters in a row: a token with them is a word, not a number or a sign.
var letters = regexp.MustCompile(`[A-Za-z]{2}`)

// EnglishWords lists the words of s that are English: tokens with letters in them, other than
// the technical ones (commands, flags, keys, names of things that have no Japanese name) that a
// Japanese text may hold. Each is listed once, in order.
func EnglishWords(s string, technical ...string) []string {
	var out []string
	for _, t := range token.FindAllString(s, -1) {
		t = strings.Trim(t, ".:=")
		if letters.MatchString(t) && !slices.Contains(technical, t) && !slices.Contains(out, t) {
			out = append(out, t)
		}
	}
	return out
}

// HasJapanese reports whether s holds kana or kanji.
func HasJapanese(s string) bool {
	return strings.ContainsFunc(s, func(r rune) bool {
		return unicode.In(r, unicode.Hiragana, unicode.Katakana, unicode.Han)
	})
}

// CheckLanguages reports the first code of c whose Japanese form has English in it (EnglishWords
// outside technical and the verbs) or whose English form has Japanese in it.
func (c Catalog) CheckLanguages(technical ...string) error {
	codes := make([]string, 0, len(c))
	for code := range c {
		codes = append(codes, code)
	}
	sort.Strings(codes)
	for _, code := range codes {
		ja := verb.ReplaceAllString(c[code][0], " ")
		if words := EnglishWords(ja, technical...); len(words) > 0 {
			return fmt.Errorf("%s: English in the Japanese form: %q", code, words)
		}
		if HasJapanese(c[code][1]) {
			return fmt.Errorf("%s: Japanese in the English form: %q", code, c[code][1])
		}
	}
	return nil
}
