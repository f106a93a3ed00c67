package domain

import (
	"fmt"
	"strconv"
	"strings"

	"github.com/picoclaw-suite/picoclaw/pkg/bearer"
)

// Approvers is the allowlist of people who may approve, deny or change Auto-Approve. An empty
// list means nobody. The bot's own identities never qualify, even when listed.
type Approvers struct {
	line, slack, cli map[string]bool
	bots             map[string]bool
	// tokens are the REST approvers (pkg/bearer, shared with the gateways' dead-letter API).
	tokens *bearer.Tokens
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
	tokens, err := bearer.Parse(c.RESTTokens)
	if err != nil {
		return nil, fmt.Errorf("%w: %w", ErrInvalid, err)
	}
	return &Approvers{line: set(c.Line), slack: set(c.Slack), cli: set(c.CLI), bots: set(c.BotIDs), tokens: tokens}, nil
}

// Tokens are the REST approvers' tokens.
func (a *Approvers) Tokens() *bearer.Tokens { return a.tokens }

// Authenticate maps a REST bearer token to its approver, comparing digests in constant time.
func (a *Approvers) Authenticate(token string) (Actor, bool) {
	name, ok := a.tokens.Authenticate(token)
	if !ok {
		return Actor{}, false
	}
	return RESTActor(name), true
}

// RESTActor is the approver a REST token names.
func RESTActor(name string) Actor { return Actor{ID: name, Channel: "rest", DisplayName: name} }

// TokenFingerprint identifies a token in the audit log without revealing it.
func TokenFingerprint(token string) string { return bearer.Fingerprint(token) }

// Check returns nil when actor may decide, or an error wrapping ErrPermission.
func (a *Approvers) Check(actor Actor) error {
	if actor.ID == "" {
		return Fail(ErrPermission, CodeNoApprover)
	}
	if a.bots[actor.ID] || actor.Channel == System.Channel || actor.Channel == "executor" {
		return Fail(ErrPermission, CodeBotCannotDecide, strconv.Quote(actor.ID))
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
		allowed = a.tokens.Has(actor.ID)
	}
	if !allowed {
		return Fail(ErrPermission, CodeNotApprover, actor.Channel+":"+actor.ID)
	}
	return nil
}
