package domain

import "testing"

func TestIsSecretPath(t *testing.T) {
	for p, want := range map[string]bool{
		".env": true, "app/.env.local": true, "prod.env": true, "certs/tls.key": true, "server.pem": true,
		"id_rsa": true, "home/.ssh/config": true, ".aws/credentials": true, "credentials.json": true,
		".npmrc": true, ".git-credentials": true, "store.p12": true,
		"main.go": false, "env.go": false, "docs/keys.md": false, "environment.md": false, "key.go": false,
	} {
		if got := IsSecretPath(p); got != want {
			t.Errorf("IsSecretPath(%q) = %v, want %v", p, got, want)
		}
	}
}

func TestHasSecretContent(t *testing.T) {
	if !HasSecretContent("key = sk-proj-abcdefghijklmnopqrstuvwxyz0123456789") {
		t.Error("an API key is not secret-looking")
	}
	if HasSecretContent("func Add(a, b int) int { return a + b }\n") {
		t.Error("plain code is secret-looking")
	}
}
