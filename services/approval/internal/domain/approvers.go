package domain

import (
	"crypto/sha256"
	"crypto/subtle"
	"encoding/hex"
	"fmt"
	"strings"
)

// Approvers is the allowlist of people who may approve, deny or change Auto-Approve. An empty
// list means nobody. The bot's own identities never qualify, even when listed.
type Approvers struct {
	line, slack, cli map[string]bool
	bots             map[string]bool
	tokens           []restToken
}

type restToken struct {
	digest [32]byte
	name   string
}

// ApproverConfig is the allowlist's input: ids per channel, REST "name:token" pairs (from the
// environment) and the bot identities.
type ApproverConfig struct {
	Line, Slack, CLI []string
	RESTTokens       string
	BotIDs           []string
}

// NewApprovers builds the allowlist; a malformed token list is an error naming the entry.
func NewApprovers(c ApproverConfig) (*Approvers, error) {
	set := func(ids []string) map[string]bool {
		m := map[string]bool{}
		for _, id := range ids {
			if id = strings.TrimSpace(id); id != "" {
				m[id] = true
			}
		}
		return m
	}
	a := &Approvers{line: set(c.Line), slack: set(c.Slack), cli: set(c.CLI), bots: set(c.BotIDs)}
	for i, pair := range strings.Split(c.RESTTokens, ",") {
		pair = strings.TrimSpace(pair)
		if pair == "" {
			continue
		}
		name, token, ok := strings.Cut(pair, ":")
		name, token = strings.TrimSpace(name), strings.TrimSpace(token)
		if !ok || name == "" || len(token) < 32 {
			return nil, fmt.Errorf("%w: REST token entry %d must be name:token with a token of at least 32 characters", ErrInvalid, i+1)
		}
		a.tokens = append(a.tokens, restToken{digest: sha256.Sum256([]byte(token)), name: name})
	}
	return a, nil
}

// Authenticate maps a REST bearer token to its approver, comparing digests in constant time.
func (a *Approvers) Authenticate(token string) (Actor, bool) {
	d := sha256.Sum256([]byte(token))
	var found Actor
	ok := false
	for _, t := range a.tokens {
		if subtle.ConstantTimeCompare(d[:], t.digest[:]) == 1 {
			found, ok = Actor{ID: t.name, Channel: "rest", DisplayName: t.name}, true
		}
	}
	return found, ok
}

// TokenFingerprint identifies a token in the audit log without revealing it.
func TokenFingerprint(token string) string {
	d := sha256.Sum256([]byte(token))
	return "sha256:" + hex.EncodeToString(d[:6])
}

// Check returns nil when actor may decide, or an error wrapping ErrPermission.
func (a *Approvers) Check(actor Actor) error {
	if actor.ID == "" {
		return fmt.Errorf("%w: no approver identity", ErrPermission)
	}
	if a.bots[actor.ID] || actor.Channel == System.Channel || actor.Channel == "executor" {
		return fmt.Errorf("%w: the bot identity %q cannot approve", ErrPermission, actor.ID)
	}
	allowed := false
	switch actor.Channel {
	case "line":
		allowed = a.line[actor.ID]
	case "slack":
		allowed = a.slack[actor.ID]
	case "cli":
		allowed = a.cli[actor.ID]
	case "rest":
		for _, t := range a.tokens {
			allowed = allowed || t.name == actor.ID
		}
	}
	if !allowed {
		return fmt.Errorf("%w: %s:%s is not an approver", ErrPermission, actor.Channel, actor.ID)
	}
	return nil
}
