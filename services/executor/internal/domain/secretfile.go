package domain

import (
	"path"
	"strings"

	"github.com/picoclaw-suite/picoclaw/pkg/redact"
)

// secretNames are file names that hold credentials by convention, whatever their content.
var secretNames = map[string]bool{
	".netrc": true, "_netrc": true, ".npmrc": true, ".pypirc": true, ".git-credentials": true,
	".pgpass": true, ".htpasswd": true, "credentials": true, "credentials.json": true,
	"credentials.yaml": true, "credentials.yml": true, "secrets.json": true, "secrets.yaml": true,
	"secrets.yml": true, "service-account.json": true, "authorized_keys": true, "known_hosts": true,
	".dockercfg": true, "terraform.tfvars": true, "terraform.tfstate": true,
}

// secretExts are extensions of key and keystore files.
var secretExts = map[string]bool{
	".pem": true, ".key": true, ".p12": true, ".pfx": true, ".jks": true, ".keystore": true,
	".ppk": true, ".asc": true, ".gpg": true, ".kdbx": true, ".tfstate": true,
}

// secretDirs are directories whose every file is a credential store.
var secretDirs = map[string]bool{".ssh": true, ".aws": true, ".gnupg": true, ".docker": true, ".kube": true}

// IsSecretPath reports whether a workspace path names a file that holds secrets by its name:
// .env files, private keys, keystores and credential files. The read-only view never returns
// them (their content, and for a tree only their count).
func IsSecretPath(p string) bool {
	for _, dir := range strings.Split(path.Dir(p), "/") {
		if secretDirs[strings.ToLower(dir)] {
			return true
		}
	}
	base := strings.ToLower(path.Base(p))
	switch {
	case base == ".env" || strings.HasPrefix(base, ".env.") || strings.HasSuffix(base, ".env"):
		return true
	case strings.HasPrefix(base, "id_rsa"), strings.HasPrefix(base, "id_dsa"),
		strings.HasPrefix(base, "id_ecdsa"), strings.HasPrefix(base, "id_ed25519"):
		return true
	case secretNames[base], secretExts[path.Ext(base)]:
		return true
	}
	return false
}

// HasSecretContent reports whether text holds something that looks like a credential (an API
// key, a bearer token, a password assignment, a private key block): pkg/redact would mask it.
func HasSecretContent(text string) bool { return redact.Secrets(text) != text }
