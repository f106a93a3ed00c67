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
