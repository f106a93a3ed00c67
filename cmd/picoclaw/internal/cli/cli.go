// Package cli implements the picoclaw commands.
package cli

import (
	"errors"
	"io"
	"os"
	"time"

	"connectrpc.com/connect"

	"github.com/picoclaw-suite/picoclaw/pkg/config"
	"github.com/picoclaw-suite/picoclaw/pkg/rpcserver"
	"github.com/picoclaw-suite/picoclaw/pkg/svcauth"
	"github.com/picoclaw-suite/picoclaw/pkg/telemetry"
)

// Exit codes scripts can rely on.
const (
	ExitOK           = 0
	ExitError        = 1
	ExitUsage        = 2
	ExitNotFound     = 3
	ExitConflict     = 4
	ExitUnauthorized = 5
	ExitUnavailable  = 6
	// ExitTampered: `audit verify` found the audit log or its read model changed.
	ExitTampered = 7
)

// IO is where a command reads and writes, and its environment.
type IO struct {
	In     io.Reader
	Out    io.Writer
	Err    io.Writer
	Getenv func(string) string
	// LookupEnv, when set, tells a variable set empty from one not set (os.LookupEnv).
	LookupEnv func(string) (string, bool)
}

// Std is the process's own IO.
func Std() IO {
	return IO{In: os.Stdin, Out: os.Stdout, Err: os.Stderr, Getenv: os.Getenv, LookupEnv: os.LookupEnv}
}

// globals are the settings every command shares.
type globals struct {
	io      IO
	cfg     config.Common
	cfgPath string
	locale  string
	token   string
	// restURL overrides the approval REST base URL (default services.approval.public_url).
	restURL string
	// creds, when set, are the terminal's credentials (the embedded suite generates them).
	creds *svcauth.Credentials
	// statePath is the run state file (--state): where `picoclaw run` records how to reach it.
	statePath string
	// state is the running embedded suite the commands talk to when nothing else is named.
	state *runState
	// staleState names a state file left by a suite that is no longer running.
	staleState string
}

// lookupEnv is the environment as config.ApplyEnv reads it.
func (g *globals) lookupEnv() config.LookupFunc {
	if g.io.LookupEnv != nil {
		return g.io.LookupEnv
	}
	return func(k string) (string, bool) { v := g.io.Getenv(k); return v, v != "" }
}

// credentials are the terminal identity's (cli) credentials: PICOCLAW_SERVICE_KEY holds the cli
// key and auth.public_keys the suite's public keys.
func (g *globals) credentials() (*svcauth.Credentials, error) {
	if g.creds != nil {
		return g.creds, nil
	}
	if g.state != nil && g.io.Getenv("PICOCLAW_SERVICE_KEY") == "" {
		return g.stateCredentials()
	}
	creds, err := svcauth.Load(svcauth.CLI, g.cfg.Auth)
	switch {
	case err == nil:
		return creds, nil
	case g.cfg.Auth.ServiceKey.Set():
		return nil, texts.Wrap(nil, err, txtCredentials, err.Error())
	case g.staleState != "":
		// No key of its own, and the suite the state file names has stopped.
		return nil, texts.Wrap(nil, err, txtStaleSuite, g.staleState)
	case g.cfgPath == "":
		return nil, texts.Wrap(nil, err, txtNoSuite)
	}
	return nil, texts.Wrap(nil, err, txtNoServiceKey)
}

// clientOptions are the options of the terminal's calls to peer: the suite's client options
// with a token made out to peer.
func (g *globals) clientOptions(tel *telemetry.Telemetry, defaultTimeout time.Duration, peer string) ([]connect.ClientOption, error) {
	creds, err := g.credentials()
	if err != nil {
		return nil, err
	}
	return rpcserver.ClientOptions(tel, defaultTimeout, svcauth.Client(creds, peer))
}

// usageError is a mistake in the command line (exit 2); err says what (a message of texts).
type usageError struct{ err error }

func (e *usageError) Error() string { return e.err.Error() }
func (e *usageError) Unwrap() error { return e.err }

// apiError is a failure with the exit code it maps to: an error answer from a service, or a
// failure the CLI says in its own words. err says what (a message of texts, or a peer's text);
// reason, when set, is the stable code the service gave (machine output shows it).
type apiError struct {
	code   int
	reason string
	err    error
}

func (e *apiError) Error() string { return e.err.Error() }
func (e *apiError) Unwrap() error { return e.err }

// codeOf maps a command's error to its exit code.
func codeOf(err error) int {
	var ae *apiError
	if errors.As(err, &ae) {
		return ae.code
	}
	var ce *connect.Error
	if errors.As(err, &ce) {
		switch ce.Code() {
		case connect.CodeNotFound:
			return ExitNotFound
		case connect.CodeAlreadyExists, connect.CodeAborted, connect.CodeFailedPrecondition:
			return ExitConflict
		case connect.CodePermissionDenied, connect.CodeUnauthenticated:
			return ExitUnauthorized
		case connect.CodeUnavailable, connect.CodeDeadlineExceeded:
			return ExitUnavailable
		}
	}
	return ExitError
}

type commonOnly struct {
	config.Common `yaml:",inline"`
}

func (c *commonOnly) Validate() error { return c.Common.Validate() }

// loadCommon reads the common keys every command needs (service URLs, locale, credentials).
func loadCommon(path string, dst *config.Common, lookup config.LookupFunc) error {
	c := commonOnly{Common: *dst}
	if path != "" {
		data, err := os.ReadFile(path)
		if err != nil {
			return configReadError(path, err)
		}
		if err := config.Decode(data, &c); err != nil {
			return texts.Wrap(nil, err, txtConfigDecode, path, err.Error())
		}
	}
	if err := config.ApplyEnv(&c, lookup); err != nil {
		return texts.Wrap(nil, err, txtConfigInvalid, err.Error())
	}
	if err := c.Validate(); err != nil {
		return texts.Wrap(nil, err, txtConfigInvalid, err.Error())
	}
	*dst = c.Common
	return nil
}

// configReadError is a config file that cannot be read, said with what is wrong with it.
func configReadError(path string, err error) error {
	return texts.Wrap(nil, err, txtConfigRead, path, trouble(err))
}
