package redact

import (
	"strings"
	"testing"
)

func TestSecrets(t *testing.T) {
	cases := []struct {
		name, in, leak string
	}{
		{"openai key", "key is sk-proj-abcdefghijklmnopqrstuvwxyz012345", "abcdefghijklmnop"},
		{"anthropic key", "x-api-key: sk-ant-api03-AAAAAAAAAAAAAAAAAAAAAAAA", "AAAAAAAAAAAAAAAA"},
		{"bearer", "Authorization: Bearer abc.def.ghijklmnop", "ghijklmnop"},
		{"slack bot", "token xoxb-123456789012-abcdefghijkl", "abcdefghijkl"},
		{"github", "ghp_abcdefghijklmnopqrstuvwxyz0123456789", "abcdefghijklmnopqrstuvwxyz"},
		{"aws", "AKIAABCDEFGHIJKLMNOP", "ABCDEFGHIJKLMNOP"},
		{"password assignment", "password=hunter22", "hunter22"},
		{"json password", `{"db_password": "s3cr3tvalue"}`, "s3cr3tvalue"},
		{"pem", "-----BEGIN RSA PRIVATE KEY-----\nMIIEabc\n-----END RSA PRIVATE KEY-----", "MIIEabc"},
		{"url userinfo", "postgres://app:topsecret@db:5432/x", "topsecret"},
		{"jwt", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.SflKxwRJSMeKKF2QT4fwpM", "SflKxwRJSMeKKF2QT4fwpM"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := Secrets(tc.in)
			if strings.Contains(got, tc.leak) {
				t.Fatalf("Secrets(%q) = %q still contains %q", tc.in, got, tc.leak)
			}
			if !strings.Contains(got, Mask) {
				t.Fatalf("Secrets(%q) = %q has no mask", tc.in, got)
			}
		})
	}
}

func TestSecretsLeavesPlainTextAlone(t *testing.T) {
	for _, s := range []string{"こんにちは、今日の予定は？", "job_20261121_001 approved", "see docs/README.md"} {
		if got := Secrets(s); got != s {
			t.Errorf("Secrets(%q) = %q, want unchanged", s, got)
		}
	}
}

func TestForCloudMasksPII(t *testing.T) {
	in := "mail me at taro.yamada@example.co.jp or call 090-1234-5678"
	got := ForCloud(in)
	for _, leak := range []string{"taro.yamada@example.co.jp", "1234-5678"} {
		if strings.Contains(got, leak) {
			t.Errorf("ForCloud left %q in %q", leak, got)
		}
	}
}

func TestIsSecretKey(t *testing.T) {
	for k, want := range map[string]bool{"api_key": true, "Authorization": true, "LINE_CHANNEL_SECRET": true, "job_id": false, "route": false} {
		if got := IsSecretKey(k); got != want {
			t.Errorf("IsSecretKey(%q) = %v, want %v", k, got, want)
		}
	}
}

func TestForCloudTable(t *testing.T) {
	cases := []struct{ name, in, leak string }{
		{"openai key", "use sk-proj-ZZabcdefghijklmnopqrstuvwx1234", "ZZabcdefghijklmnopqrstuvwx1234"},
		{"anthropic key", "ANTHROPIC_API_KEY=sk-ant-api03-QQabcdefghijklmnopqrstu", "QQabcdefghijklmnopqrstu"},
		{"bearer token", "Authorization: Bearer abcDEF123456ghiJKL789", "abcDEF123456ghiJKL789"},
		{"password", "db password: hunter2hunter2", "hunter2hunter2"},
		{"private key", "-----BEGIN OPENSSH PRIVATE KEY-----\nb3BlbnNzaC1rZXktdjEAAAA\n-----END OPENSSH PRIVATE KEY-----", "b3BlbnNzaC1rZXktdjEAAAA"},
		{"email", "連絡先は hanako.sato@example.jp です", "hanako.sato@example.jp"},
		{"mobile", "電話 090-1234-5678 まで", "090-1234-5678"},
		{"mobile no separators", "電話 09012345678", "09012345678"},
		{"international", "call +81 90 1234 5678", "1234 5678"},
		{"international dashes", "call +1-415-555-0132", "555-0132"},
		{"landline", "代表 03-1234-5678", "03-1234-5678"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := ForCloud(tc.in)
			if strings.Contains(got, tc.leak) || !strings.Contains(got, Mask) {
				t.Fatalf("ForCloud(%q) = %q", tc.in, got)
			}
		})
	}
	for _, s := range []string{"job_20261121_001 の件", "version 1.2.3", "see docs/README.md", "ループ 3 回"} {
		if got := ForCloud(s); got != s {
			t.Errorf("ForCloud(%q) = %q, want unchanged", s, got)
		}
	}
}

// allRules is Secrets without the cheap pre-checks: every regular expression on every string.
func allRules(s string) string {
	for _, r := range secretRules {
		s = r.re.ReplaceAllString(s, r.repl)
	}
	return s
}

func TestPrecheckNeverSkipsAMatch(t *testing.T) {
	inputs := []string{
		"",
		"今日はいい天気だね、散歩に行こうかな",
		"job_20261122_8815 replied in 3 ms",
		"Authorization: Bearer abcdefghijklmnop",
		"authorization: BASIC dXNlcjpwYXNzd29yZA==",
		"key sk-abcdefghijklmnopqrstuvwxyz here",
		"xoxb-1234567890-abcdef and xapp-1-A0123456789-abc",
		"ghp_abcdefghijklmnopqrstuvwxyz0123456789 github_pat_abcdefghijklmnopqrstuvwxyz0123456789",
		"AKIAABCDEFGHIJKLMNOP AIzaSyA-abcdefghijklmnopqrstuvwxyz012345",
		"eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.abcdefghijklmnop",
		"DB_PASSWORD=hunter22 api-key: 'abcdef' Client_Secret=\"xyz123\" pwd=abc",
		"MY_TOKEN = s3cr3tvalue",
		"postgres://user:pa55word@db:5432/app",
		"-----BEGIN RSA PRIVATE KEY-----\nMIIEow\n-----END RSA PRIVATE KEY-----",
		"pa\u017fsword=hunter22",       // ſ folds to s under (?i)
		"api_\u212aey=abcdef1234",      // Kelvin sign folds to k
		"token without separator here", // keyword, no : or =
		"a=b c:d without keywords",
		"[PRIVATE KEY ***] sk-*** jwt:***",
	}
	for _, in := range inputs {
		if got, want := Secrets(in), allRules(in); got != want {
			t.Errorf("Secrets(%q) = %q, every rule gives %q", in, got, want)
		}
	}
}

func BenchmarkSecretsPlainText(b *testing.B) {
	s := "message.replied reply_job_id job_20261122_8815 今日はいい天気だね、散歩に行こうかな"
	for b.Loop() {
		_ = Secrets(s)
	}
}
