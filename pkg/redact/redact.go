// Package redact masks secrets (and, for text bound to cloud models, personal data) in strings.
package redact

import (
	"regexp"
	"strings"
)

// Mask replaces a secret value.
const Mask = "***"

type rule struct {
	re   *regexp.Regexp
	repl string
	// maybe is a cheap test that is false only when re cannot match s (lower is s in lower
	// case); it lets ordinary log text skip the regular expression. Nil means always try.
	maybe func(s, lower string) bool
}

func has(words ...string) func(s, lower string) bool {
	return func(s, _ string) bool { return containsAny(s, words) }
}

func hasFold(words ...string) func(s, lower string) bool {
	return func(_, lower string) bool { return containsAny(lower, words) }
}

func containsAny(s string, words []string) bool {
	for _, w := range words {
		if strings.Contains(s, w) {
			return true
		}
	}
	return false
}

// secretRules match credentials. Order matters: whole PEM and PGP blocks before shorter token
// shapes, labelled quoted values before the unquoted label rule.
//
// Stripe keys: secret (sk_live_, sk_test_) and restricted (rk_live_, rk_test_) keys are masked,
// test-mode ones too (they still open an account's API); publishable keys (pk_live_, pk_test_)
// are public by design and stay.
var secretRules = []rule{
	{regexp.MustCompile(`-----BEGIN [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----[\s\S]*?(-----END [A-Z0-9 ]*PRIVATE KEY(?: BLOCK)?-----|$)`), "[PRIVATE KEY " + Mask + "]", has("-----BEGIN ")},
	{regexp.MustCompile(`\b([sr]k_(?:live|test))_[A-Za-z0-9]{10,}`), "${1}_" + Mask, has("k_live_", "k_test_")},
	{regexp.MustCompile(`\bwhsec_[A-Za-z0-9+/=]{16,}`), "whsec_" + Mask, has("whsec_")},
	// AWS secret access keys: 40 base64 characters after a label naming them (alone, 40
	// characters are as likely a git SHA or a hash).
	{regexp.MustCompile(`(?i)((?:aws)?[_\-. ]?secret[_\-. ]?(?:access)?[_\-. ]?key(?:[_\-. ]?id)?["']?\s*[:=]\s*["']?)[A-Za-z0-9/+]{40}\b`), "${1}" + Mask, hasFold("secret")},
	{regexp.MustCompile(`(?i)\b(bearer|basic)\s+[A-Za-z0-9._~+/=\-]{8,}`), "$1 " + Mask, hasFold("bearer", "basic")},
	{regexp.MustCompile(`\bsk-[A-Za-z0-9_\-]{16,}`), "sk-" + Mask, has("sk-")},
	{regexp.MustCompile(`\bxox[abposr]-[A-Za-z0-9\-]{10,}`), "xox-" + Mask, has("xox")},
	{regexp.MustCompile(`\bxapp-[A-Za-z0-9\-]{10,}`), "xapp-" + Mask, has("xapp-")},
	{regexp.MustCompile(`\bgh[pousr]_[A-Za-z0-9]{30,}`), "gh_" + Mask, has("gh")},
	{regexp.MustCompile(`\bgithub_pat_[A-Za-z0-9_]{30,}`), "github_pat_" + Mask, has("github_pat_")},
	{regexp.MustCompile(`\bAKIA[0-9A-Z]{16}\b`), "AKIA" + Mask, has("AKIA")},
	{regexp.MustCompile(`\bAIza[0-9A-Za-z_\-]{35}\b`), "AIza" + Mask, has("AIza")},
	{regexp.MustCompile(`\beyJ[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}\.[A-Za-z0-9_\-]{8,}`), "jwt:" + Mask, has("eyJ")},
	// A quoted value after a label is masked whole, spaces included ("password": "two words").
	{regexp.MustCompile(`(?i)\b((?:[a-z0-9]+[_-])*(?:password|passwd|passphrase|pwd|secret|token|api[_-]?key|access[_-]?key|private[_-]?key|client[_-]?secret)["']?\s*[:=]\s*)(?:"(?:[^"\\\n]|\\.)+"|'[^'\n]+')`), "${1}\"" + Mask + "\"",
		func(s, lower string) bool {
			return strings.ContainsAny(s, ":=") && strings.ContainsAny(s, `"'`) && hasFold("pass", "pwd", "secret", "token", "key")(s, lower)
		}},
	{regexp.MustCompile(`(?i)\b((?:[a-z0-9]+[_-])*(?:password|passwd|passphrase|pwd|secret|token|api[_-]?key|access[_-]?key|private[_-]?key|client[_-]?secret)["']?\s*[:=]\s*["']?)[^\s"',;]{3,}`), "${1}" + Mask,
		func(s, lower string) bool {
			return strings.ContainsAny(s, ":=") && hasFold("pass", "pwd", "secret", "token", "key")(s, lower)
		}},
	{regexp.MustCompile(`(?i)(://[^:/\s@]+:)[^@/\s]+@`), "${1}" + Mask + "@", has("://")},
	// Japanese labels: パスワード, 暗証番号, 秘密鍵 (and パスフレーズ, パスコード) followed by a colon
	// or equals sign, half or full width. Without one ("パスワードを忘れた") nothing is masked.
	{regexp.MustCompile(`(パスワード|パスフレーズ|パスコード|暗証番号|秘密鍵)(\s*[:：=＝]\s*)(?:「[^」\n]*」|『[^』\n]*』|"[^"\n]*"|[^\s、。，,;；」』)）]+)`), "${1}${2}" + Mask,
		has("パス", "暗証番号", "秘密鍵")},
}

// foldsToASCII are the non-ASCII runes that (?i) matches as ASCII letters (ſ as s, the Kelvin
// sign as k); text containing one always takes the full regular expressions.
const foldsToASCII = "\u017f\u212a"

// piiRules match personal data that must not leave for a cloud provider.
var piiRules = []rule{
	{regexp.MustCompile(`[A-Za-z0-9._%+\-]+@[A-Za-z0-9.\-]+\.[A-Za-z]{2,}`), "[EMAIL " + Mask + "]", nil},
	// International numbers first (+81 90 1234 5678), then national ones with a leading 0.
	{regexp.MustCompile(`\+\d{1,3}[\s\-]?\(?\d{1,4}\)?(?:[\s\-]?\d{2,4}){2,4}\b`), "[PHONE " + Mask + "]", nil},
	{regexp.MustCompile(`(?:\+\d{1,3}[\s\-]?)?(?:\(?0\d{1,4}\)?[\s\-]?)\d{1,4}[\s\-]?\d{3,4}\b`), "[PHONE " + Mask + "]", nil},
}

// Secrets masks credentials in s: API keys, bearer tokens, passwords, private keys, URL
// userinfo. It is what logs use.
func Secrets(s string) string {
	if s == "" {
		return s
	}
	unusual := strings.ContainsAny(s, foldsToASCII)
	lower := strings.ToLower(s)
	for _, r := range secretRules {
		if !unusual && r.maybe != nil && !r.maybe(s, lower) {
			continue
		}
		if masked := r.re.ReplaceAllString(s, r.repl); masked != s {
			s, lower = masked, strings.ToLower(masked)
		}
	}
	return s
}

// ForCloud masks credentials and personal data (e-mail addresses, phone numbers) in text that
// is about to be sent to a cloud model.
func ForCloud(s string) string {
	s = Secrets(s)
	for _, r := range piiRules {
		s = r.re.ReplaceAllString(s, r.repl)
	}
	return s
}

var secretKeyWords = []string{"password", "passwd", "passphrase", "secret", "token", "apikey", "api_key", "api-key", "authorization", "credential", "private_key", "dsn"}

// IsSecretKey reports whether a field or attribute name suggests its value is a secret.
func IsSecretKey(key string) bool {
	k := strings.ToLower(key)
	for _, w := range secretKeyWords {
		if strings.Contains(k, w) {
			return true
		}
	}
	return false
}
