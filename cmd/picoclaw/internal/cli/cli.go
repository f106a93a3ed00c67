// Package cli implements the picoclaw commands.
package cli

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"sort"
	"strings"
	"syscall"
	"time"

	"connectrpc.com/connect"

	"github.com/picoclaw-suite/picoclaw/pkg/buildinfo"
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
}

// Std is the process's own IO.
func Std() IO { return IO{In: os.Stdin, Out: os.Stdout, Err: os.Stderr, Getenv: os.Getenv} }

// command is one subcommand.
type command struct {
	summary string
	usage   string
	run     func(ctx context.Context, g *globals, args []string) error
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
}

// credentials are the terminal identity's (cli) credentials: PICOCLAW_SERVICE_KEY holds the cli
// key and auth.public_keys the suite's public keys.
func (g *globals) credentials() (*svcauth.Credentials, error) {
	if g.creds != nil {
		return g.creds, nil
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

func commands() map[string]command {
	return map[string]command{
		"run":          {"start the whole suite in this process and chat in this terminal (or run it as a service)", "run [--data DIR] [--user NAME] [--chat auto|on|off] [--grace 2s] [--log-max-size MB] [--log-max-age 24h] [--log-keep N]", runEmbedded},
		"data":         {"compact or export the embedded suite's data directory", "data compact|export [--data DIR] [--out FILE]", runData},
		"chat":         {"chat with a running suite (channel cli)", "chat [--user NAME]", runChat},
		"deadletters":  {"list, show, replay or drop the gateways' dead letters (events not handled, replies and pushes not sent)", "deadletters list [--channel line|slack] [--queue inbox|outbox] [--limit N] | show|replay|drop <channel>:<queue>:<id> [--gateway-url URL] [--json]", runDeadLetters},
		"jobs":         {"list approval jobs", "jobs [--status pending|granted|auto_approved|denied|expired|cancelled|executing|completed|failed|refused]", runJobs},
		"job":          {"show a job and its audit trail", "job <job_id>", runJob},
		"approve":      {"approve a pending job", "approve <job_id>", runApprove},
		"deny":         {"deny a pending job", "deny <job_id> [--reason TEXT]", runDeny},
		"auto-approve": {"turn Auto-Approve on or off, or show it", "auto-approve on [--ttl 30m] [--paths docs/,README.md] [--tasks docs,review] [--routes CODE1] [--ops shell] [--reason TEXT] | off | status", runAutoApprove},
		"status":       {"show the heartbeat report of every service and agent", "status", runStatus},
		"keys":         {"make a fresh set of service keys (env lines for compose or Kubernetes secrets)", "keys", runKeys},
		"audit":        {"verify the audit log: chains, anchors and job rows (reads the database with the audit key)", "audit verify [--job ID] [--data DIR | --sqlite FILE] [--json]", runAudit},
		"doctor":       {"check that this machine can run the executor's sandbox", "doctor", runDoctor},
		"version":      {"print the version and commit this binary was built from", "version", runVersion},
		"policy":       {"show what the approval policy decides for a patch, the deciding rule and the facts (no job is created)", "policy test <patch-file> [--route R] [--task T] [--as USER] [--cost USD] [--tokens N] [--policy FILE | --remote] [--json]", runPolicy},
	}
}

// Main runs the CLI and returns the exit code.
func Main(args []string, stdio IO) int {
	g := &globals{io: stdio}
	fs := flag.NewFlagSet("picoclaw", flag.ContinueOnError)
	fs.SetOutput(stdio.Err)
	fs.StringVar(&g.cfgPath, "config", stdio.Getenv("PICOCLAW_CONFIG"), "suite config file (env PICOCLAW_CONFIG); service URLs come from it")
	fs.StringVar(&g.locale, "locale", "", "ja or en (default: the config's locale)")
	fs.StringVar(&g.restURL, "approval-url", "", "approval REST base URL (default: services.approval.url)")
	showVersion := fs.Bool("version", false, "print the version and exit")
	fs.Usage = func() { usage(stdio.Err) }
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return ExitOK
		}
		return ExitUsage
	}
	rest := fs.Args()
	if *showVersion {
		_ = runVersion(context.Background(), g, nil)
		return ExitOK
	}
	if len(rest) == 0 || rest[0] == "help" || rest[0] == "--help" || rest[0] == "-h" {
		if len(rest) > 1 {
			if c, ok := commands()[rest[1]]; ok {
				fmt.Fprintf(stdio.Out, "usage: picoclaw %s\n\n%s\n", c.usage, c.summary)
				return ExitOK
			}
		}
		usage(stdio.Out)
		if len(rest) == 0 {
			return ExitUsage
		}
		return ExitOK
	}
	cmd, ok := commands()[rest[0]]
	if !ok {
		fmt.Fprintf(stdio.Err, "picoclaw: unknown command %q\n\n", rest[0])
		usage(stdio.Err)
		return ExitUsage
	}
	cfg := config.DefaultCommon()
	if err := loadCommon(g.cfgPath, &cfg, stdio.Getenv); err != nil {
		fmt.Fprintf(stdio.Err, "picoclaw: %v\n", err)
		return ExitUsage
	}
	g.cfg = cfg
	if g.locale == "" {
		g.locale = cfg.Locale
	}
	g.token = stdio.Getenv("PICOCLAW_TOKEN")
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// After the first signal the default handling returns: a second Ctrl-C ends the process.
	context.AfterFunc(ctx, stop)
	err := cmd.run(ctx, g, rest[1:])
	return exitCode(stdio.Err, rest[0], cmd.usage, err)
}

type commonOnly struct {
	config.Common `yaml:",inline"`
}

func (c *commonOnly) Validate() error { return c.Common.Validate() }

func loadCommon(path string, dst *config.Common, getenv func(string) string) error {
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
	lookup := func(k string) (string, bool) { v := getenv(k); return v, v != "" }
	if err := config.ApplyEnv(&c, lookup); err != nil {
		return err
	}
	if err := c.Validate(); err != nil {
		return fmt.Errorf("invalid config: %w", err)
	}
	*dst = c.Common
	return nil
}

func usage(w io.Writer) {
	fmt.Fprintln(w, "usage: picoclaw [--config FILE] [--locale ja|en] <command> [arguments]")
	fmt.Fprintln(w, "\ncommands:")
	cmds := commands()
	names := make([]string, 0, len(cmds))
	for n := range cmds {
		names = append(names, n)
	}
	sort.Strings(names)
	for _, n := range names {
		fmt.Fprintf(w, "  %-13s %s\n", n, cmds[n].summary)
	}
	fmt.Fprintln(w, "\n`picoclaw help <command>` or `picoclaw <command> --help` shows a command's options.")
	fmt.Fprintln(w, "Approval and dead-letter commands send the approver's token in PICOCLAW_TOKEN.")
	fmt.Fprintf(w, "\nexit codes: %d ok, %d error, %d usage, %d not found, %d conflict (already decided), %d unauthorized/forbidden, %d service unavailable, %d audit log tampered\n",
		ExitOK, ExitError, ExitUsage, ExitNotFound, ExitConflict, ExitUnauthorized, ExitUnavailable, ExitTampered)
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

func exitCode(w io.Writer, name, use string, err error) int {
	if err == nil {
		return ExitOK
	}
	if errors.Is(err, flag.ErrHelp) {
		return ExitOK
	}
	var ue *usageError
	if errors.As(err, &ue) {
		fmt.Fprintf(w, "picoclaw %s: %s\nusage: picoclaw %s\n", name, ue.msg, use)
		return ExitUsage
	}
	if errors.Is(err, context.Canceled) {
		return ExitOK
	}
	fmt.Fprintf(w, "picoclaw %s: %v\n", name, err)
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

// newFlags builds a command's flag set; --help prints its usage and every option with its
// default, on standard output.
func newFlags(g *globals, name, use string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	// Parse errors are reported once, by exitCode, with the usage line.
	fs.SetOutput(io.Discard)
	fs.Usage = func() {
		fmt.Fprintf(g.io.Out, "usage: picoclaw %s\n", use)
		if c, ok := commands()[name]; ok {
			fmt.Fprintf(g.io.Out, "\n%s\n", c.summary)
		}
		has := false
		fs.VisitAll(func(*flag.Flag) { has = true })
		if has {
			fmt.Fprintln(g.io.Out, "\noptions:")
			fs.SetOutput(g.io.Out)
			fs.PrintDefaults()
			fs.SetOutput(io.Discard)
		}
	}
	return fs
}

// parseInterspersed lets flags follow positional arguments (`deny job_x --reason "..."`). An
// unknown flag or a bad value is a usage error (exit code 2).
func parseInterspersed(fs *flag.FlagSet, args []string) ([]string, error) {
	var pos []string
	for {
		if err := fs.Parse(args); err != nil {
			if errors.Is(err, flag.ErrHelp) {
				return nil, err
			}
			return nil, usagef("%v", err)
		}
		args = fs.Args()
		if len(args) == 0 {
			return pos, nil
		}
		pos = append(pos, args[0])
		args = args[1:]
	}
}

func joinLines(lines []string) string { return strings.Join(lines, "\n") }

func runVersion(_ context.Context, g *globals, args []string) error {
	fs := newFlags(g, "version", commands()["version"].usage)
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("unexpected argument %q", pos[0])
	}
	fmt.Fprintln(g.io.Out, "picoclaw", buildinfo.Get())
	return nil
}
