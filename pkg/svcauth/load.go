package svcauth

import (
	"errors"
	"fmt"

	"github.com/picoclaw-suite/picoclaw/pkg/config"
)

// Load builds self's credentials from the configuration; the error names the variable or key
// at fault, so a service without its credentials refuses to start and says what to set.
func Load(self string, a config.Auth) (*Credentials, error) {
	c, err := NewCredentials(self, a.ServiceKey.Value(), a.PublicKeys)
	switch {
	case err == nil:
		return c, nil
	case errors.Is(err, ErrNoKey):
		return nil, &config.KeyError{Key: "auth.service_key", Msg: "must be set in the environment variable PICOCLAW_SERVICE_KEY " +
			"(this service's own Ed25519 key; `picoclaw keys` makes a set for the whole suite)"}
	case errors.Is(err, ErrBadKey) && a.ServiceKey.Set():
		if _, perr := decodeKey(a.ServiceKey.Value()); perr != nil {
			return nil, &config.KeyError{Key: "auth.service_key", Msg: "PICOCLAW_SERVICE_KEY: " + err.Error()}
		}
	}
	return nil, &config.KeyError{Key: "auth.public_keys", Msg: fmt.Sprintf("PICOCLAW_AUTH_PUBLIC_KEYS: %v", err)}
}
