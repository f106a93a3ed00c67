package redact

import (
	"strings"
	"testing"
)

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

// TestSecretsTable: each case names what must disappear (leak) or, for look-alikes, expects the
// text unchanged (leak empty).
func TestSecretsTable(t *testing.T) {
	pgp := "-----BEGIN PGP PRIVATE KEY BLOCK-----\n\nlQOYBGR0ZXN0AQgAxyz\n=AbCd\n-----END PGP PRIVATE KEY BLOCK-----"
	cases := []struct{ name, in, leak string }{
		// Private keys.
		{"pgp private key block", "key:\n" + pgp + "\nend", "lQOYBGR0ZXN0AQgAxyz"},
		{"pgp block cut off", "-----BEGIN PGP PRIVATE KEY BLOCK-----\nlQOYBGR0ZXN0AQgAtruncated", "lQOYBGR0ZXN0AQgAtruncated"},
		{"ec private key", "-----BEGIN EC PRIVATE KEY-----\nMHcCAQEEIBkg\n-----END EC PRIVATE KEY-----", "MHcCAQEEIBkg"},
		{"encrypted private key", "-----BEGIN ENCRYPTED PRIVATE KEY-----\nMIIFHzBJBgkq\n-----END ENCRYPTED PRIVATE KEY-----", "MIIFHzBJBgkq"},
		// Stripe-style keys.
		{"sk_live", "stripe sk_live_51HabcdEFGHijklMNOPqrstUV", "51HabcdEFGHijklMNOPqrstUV"},
		{"rk_live", "restricted rk_live_51HzyxwVUTsrqPONmlk", "51HzyxwVUTsrqPONmlk"},
		{"sk_test is masked too", "test key sk_test_4eC39HqLyjWDarjtT1zdp7dc", "4eC39HqLyjWDarjtT1zdp7dc"},
		{"webhook secret", "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw", "MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw"},
		// AWS.
		{"aws secret env", "AWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"},
		{"aws secret ini", "aws_secret_access_key = wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY", "wJalrXUtnFEMI/K7MDENG"},
		{"aws secret camel json", `{"SecretAccessKey": "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY"}`, "wJalrXUtnFEMI/K7MDENG"},
		{"aws secret yaml", "secret_key: wJalrXUtnFEMI+K7MDENG+bPxRfiCYEXAMPLEKEY", "wJalrXUtnFEMI+K7MDENG"},
		{"aws key id", "AKIAIOSFODNN7EXAMPLE", "IOSFODNN7EXAMPLE"},
		// JWTs.
		{"jwt alone", "eyJhbGciOiJIUzI1NiIsInR5cCI6IkpXVCJ9.eyJzdWIiOiIxMjM0NTY3ODkwIiwibmFtZSI6IkpvaG4ifQ.SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c", "SflKxwRJSMeKKF2QT4fwpMeJf36POk6yJV_adQssw5c"},
		{"jwt in cookie", "Cookie: session=eyJhbGciOiJFUzI1NiJ9.eyJzdWIiOiJhZG1pbiJ9.MEUCIQDabcdefgh; path=/", "MEUCIQDabcdefgh"},
		{"jwt bearer", "Authorization: Bearer eyJhbGciOiJSUzI1NiJ9.eyJpc3MiOiJ4In0.c2lnbmF0dXJlLXBhcnQ", "c2lnbmF0dXJlLXBhcnQ"},
		// Password pairs.
		{"password=", "password=hunter22", "hunter22"},
		{"passwd:", "passwd: tr0ub4dor", "tr0ub4dor"},
		{"pwd=", "mysql -u root pwd=Zx9!qwerty", "Zx9!qwerty"},
		{"PASSWORD env", "DB_PASSWORD=correct-horse", "correct-horse"},
		{"json password", `{"user":"a","password":"p@ss w0rd here"}`, "w0rd here"},
		{"json password spaced", `{"password" : "two words"}`, "two words"},
		{"yaml password quoted", "password: 'single quoted secret'", "quoted secret"},
		{"passphrase", "passphrase=open sesame", "open"},
		{"url userinfo", "https://deploy:ghs_tokenvalue123@github.com/o/r.git", "ghs_tokenvalue123"},
		{"client secret", "client_secret: 8Q~abcdEFGHijkl", "8Q~abcdEFGHijkl"},
		// Japanese labels.
		{"パスワード full colon", "パスワード：hunter22", "hunter22"},
		{"パスワード half colon", "パスワード: hunter22 です", "hunter22"},
		{"暗証番号", "暗証番号：1234", "1234"},
		{"暗証番号 equals", "暗証番号＝9876。", "9876"},
		{"秘密鍵", "秘密鍵: abcDEF123xyz", "abcDEF123xyz"},
		{"パスワード in brackets", "パスワード：「hello world」", "hello world"},
		{"パスワード then punctuation", "パスワードは？ パスワード：s3cret、よろしく", "s3cret"},
		// Existing shapes keep working.
		{"openai", "sk-proj-abcdefghijklmnopqrstuvwxyz012345", "abcdefghijklmnop"},
		{"openai in text", "key is sk-proj-abcdefghijklmnopqrstuvwxyz012345", "abcdefghijklmnop"},
		{"anthropic", "x-api-key: sk-ant-api03-AAAAAAAAAAAAAAAAAAAAAAAA", "AAAAAAAAAAAAAAAA"},
		{"bearer", "Authorization: Bearer abc.def.ghijklmnop", "ghijklmnop"},
		{"github", "ghp_abcdefghijklmnopqrstuvwxyz0123456789", "abcdefghijklmnopqrstuvwxyz"},
		{"slack", "xoxb-123456789012-abcdefghijkl", "abcdefghijkl"},
		{"slack bot", "token xoxb-123456789012-abcdefghijkl", "abcdefghijkl"},
		{"aws", "AKIAABCDEFGHIJKLMNOP", "ABCDEFGHIJKLMNOP"},
		{"json db_password", `{"db_password": "s3cr3tvalue"}`, "s3cr3tvalue"},
		{"rsa pem", "-----BEGIN RSA PRIVATE KEY-----\nMIIEabc\n-----END RSA PRIVATE KEY-----", "MIIEabc"},
		{"url userinfo postgres", "postgres://app:topsecret@db:5432/x", "topsecret"},
		{"short jwt", "eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiIxMjM0NTY3ODkwIn0.SflKxwRJSMeKKF2QT4fwpM", "SflKxwRJSMeKKF2QT4fwpM"},

		// Look-alikes that stay unmasked.
		{"the word password", "Please enter your password", ""},
		{"password field text", "The password field is required.", ""},
		{"パスワードを忘れた", "パスワードを忘れた", ""},
		{"パスワードの変更", "パスワードの変更方法を教えて", ""},
		{"秘密鍵 prose", "秘密鍵は絶対に共有しないでください", ""},
		{"uuid", "request 123e4567-e89b-12d3-a456-426614174000 failed", ""},
		{"git sha", "commit 9fceb02d0ae598e95dc970b74767f19372d61af8 fixed it", ""},
		{"short sha", "see a1b2c3d", ""},
		{"base64 prose", "the payload dGhpcyBpcyBqdXN0IGEgdGVzdCBzdHJpbmc= decodes to a test", ""},
		{"40 chars without label", "hash wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY here", ""},
		{"publishable key", "pk_live_51HabcdEFGHijklMNOPqrst is public", ""},
		{"risk- words", "risk-assessment and desk-lamp-settings", ""},
		{"eyJ without three parts", "eyJhbGciOiJIUzI1NiJ9 alone", ""},
		{"sk_ prefix words", "task_live_update and mask_test_case", ""},
		{"pwd command", "run pwd and ls", ""},
		{"job id", "job_20261121_001 approved", ""},
		{"plain japanese", "こんにちは、今日の予定は？", ""},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			got := Secrets(tc.in)
			if tc.leak == "" {
				if got != tc.in {
					t.Fatalf("Secrets(%q) = %q, want unchanged", tc.in, got)
				}
				return
			}
			if strings.Contains(got, tc.leak) || !strings.Contains(got, Mask) {
				t.Fatalf("Secrets(%q) = %q, must not contain %q", tc.in, got, tc.leak)
			}
			if again := Secrets(got); again != got {
				t.Errorf("not stable: %q -> %q", got, again)
			}
		})
	}
	if n := len(cases); n < 40 {
		t.Fatalf("only %d cases", n)
	}
}
