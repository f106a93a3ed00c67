package channel

import (
	"net/url"
	"strings"
	"time"

	"github.com/picoclaw-suite/picoclaw/pkg/bearer"
	"github.com/picoclaw-suite/picoclaw/pkg/config"
	"github.com/picoclaw-suite/picoclaw/pkg/inbox"
	"github.com/picoclaw-suite/picoclaw/pkg/rpcserver"
)

// Settings are the keys every channel's config section has (inlined into the section).
type Settings struct {
	// APIBaseURL is the channel API's endpoint.
	APIBaseURL string `yaml:"api_base_url"`
	// AllowedUsers are the channel's user ids that may use the assistant; empty means nobody.
	AllowedUsers []string `yaml:"allowed_users"`
	// ChatTimeout bounds one call to chat-mio.
	ChatTimeout time.Duration  `yaml:"chat_timeout"`
	Inbox       inbox.Settings `yaml:"inbox"`
	// ApproverTokens are the approvers' REST tokens ("name:token,…", the same variable approval
	// reads): they open the gateway's dead-letter API. Unset means nobody may use it.
	ApproverTokens config.Secret `yaml:"-" env:"PICOCLAW_APPROVAL_TOKENS"`
}

// DefaultSettings are the defaults of the spec for a channel whose API lives at apiBaseURL.
func DefaultSettings(apiBaseURL string) Settings {
	return Settings{APIBaseURL: apiBaseURL, ChatTimeout: 120 * time.Second, Inbox: inbox.DefaultSettings()}
}

// Validate checks the settings of the section (line, slack) and names the offending key.
func (s Settings) Validate(section string) error {
	var errs config.Errors
	if u, err := url.Parse(s.APIBaseURL); err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" {
		errs.Addf(section+".api_base_url", "must be an http(s) URL, got %q", s.APIBaseURL)
	}
	if s.ChatTimeout <= 0 {
		errs.Addf(section+".chat_timeout", "must be positive, got %s", s.ChatTimeout)
	}
	errs.Add(config.Prefix(section+".inbox", s.Inbox.Validate()))
	if _, err := bearer.Parse(s.ApproverTokens.Value()); err != nil {
		errs.Addf(section+".approver_tokens", "env PICOCLAW_APPROVAL_TOKENS: %v", err)
	}
	for _, pair := range strings.Split(s.ApproverTokens.Value(), ",") {
		if _, token, ok := strings.Cut(strings.TrimSpace(pair), ":"); ok {
			if err := config.CheckSecret("PICOCLAW_APPROVAL_TOKENS", strings.TrimSpace(token), config.MinSecretBytes); err != nil {
				errs.Addf(section+".approver_tokens", "%v", err)
			}
		}
	}
	return errs.Err()
}

// ValidateSecret checks a channel secret that comes from the environment variable env; key is
// the config key it is reported under.
func ValidateSecret(key, env string, s config.Secret) error {
	var errs config.Errors
	if !s.Set() {
		errs.Addf(key, "must be set in the environment variable %s", env)
	} else if err := config.CheckSecret(env, s.Value(), config.MinSecretBytes); err != nil {
		errs.Addf(key, "%v", err)
	}
	return errs.Err()
}

// Wiring is what tests and the embedded suite hand a gateway besides its configuration.
type Wiring = rpcserver.Wiring
