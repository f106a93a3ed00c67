// Package cli implements the picoclaw commands.
package cli

import (
	"errors"
	"fmt"
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
	return svcauth.Load(svcauth.CLI, g.cfg.Auth)
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

// usageError is a mistake in the command line.
type usageError struct{ msg string }

func (e *usageError) Error() string { return e.msg }

func usagef(format string, args ...any) error { return &usageError{fmt.Sprintf(format, args...)} }

// apiError is an error answer from a service, with the exit code it maps to.
type apiError struct {
	code int
	msg  string
}

func (e *apiError) Error() string { return e.msg }

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
			return fmt.Errorf("read config: %w", err)
		}
		if err := config.Decode(data, &c); err != nil {
			return fmt.Errorf("config %s: %w", path, err)
		}
	}
	if err := config.ApplyEnv(&c, lookup); err != nil {
		return err
	}
	if err := c.Validate(); err != nil {
		return fmt.Errorf("invalid config: %w", err)
	}
	*dst = c.Common
	return nil
}
