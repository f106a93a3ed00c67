// Package bearer is the approvers' REST tokens (PICOCLAW_APPROVAL_TOKENS, "name:token,…"): how
// the list is read, how a bearer token is matched to its approver (digests compared in constant
// time) and how a token is named in logs without revealing it. It is a value package (approval's
// domain uses it); the HTTP guard in front of every REST API of the suite — approval's jobs API,
// the gateways' dead letters — is rpcserver.RequireApprover. One copy, so a token means the same
// approver everywhere.
package bearer

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"strings"
)

// MinLength is the shortest token accepted.
const MinLength = 32

// Tokens are the approvers' tokens. The zero value (and an empty list) accepts nobody.
type Tokens struct {
	list []entry
}

type entry struct {
	digest [32]byte
	name   string
}

// Parse reads "name:token,name2:token2"; blank entries are skipped, a malformed one is an
// error naming its position (never its token).
func Parse(list string) (*Tokens, error) {
	t := &Tokens{}
	for i, pair := range strings.Split(list, ",") {
		pair = strings.TrimSpace(pair)
		if pair == "" {
			continue
		}
		name, token, ok := strings.Cut(pair, ":")
		name, token = strings.TrimSpace(name), strings.TrimSpace(token)
		if !ok || name == "" || len(token) < MinLength {
			return nil, fmt.Errorf("REST token entry %d must be name:token with a token of at least %d characters", i+1, MinLength)
		}
		t.list = append(t.list, entry{digest: sha256.Sum256([]byte(token)), name: name})
	}
	return t, nil
}

// Authenticate returns the approver whose token this is. Every entry is compared, so the time
// taken does not tell which one matched.
func (t *Tokens) Authenticate(token string) (name string, ok bool) {
	if t == nil {
		return "", false
	}
	d := sha256.Sum256([]byte(token))
	for _, e := range t.list {
		if subtle.ConstantTimeCompare(d[:], e.digest[:]) == 1 {
			name, ok = e.name, true
		}
	}
	return name, ok
}

// Has reports whether name is one of the approvers.
func (t *Tokens) Has(name string) bool {
	if t == nil {
		return false
	}
	for _, e := range t.list {
		if e.name == name {
			return true
		}
	}
	return false
}

// Len is the number of tokens.
func (t *Tokens) Len() int {
	if t == nil {
		return 0
	}
	return len(t.list)
}

// Fingerprint names a token in logs and audit records without revealing it.
func Fingerprint(token string) string {
	d := sha256.Sum256([]byte(token))
	return "sha256:" + hex.EncodeToString(d[:6])
}
