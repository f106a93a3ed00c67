// Package runner is the shared body of every service's main: flags, signals, exit codes.
package runner

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"

	"github.com/picoclaw-suite/picoclaw/pkg/buildinfo"
	"github.com/picoclaw-suite/picoclaw/pkg/config"
	"github.com/picoclaw-suite/picoclaw/pkg/idlemem"
)

// EnvConfig names the config file when -config is not given.
const EnvConfig = "PICOCLAW_CONFIG"

// RunFunc runs the service until ctx ends. args are the arguments left after the flags
// (a subcommand such as "migrate").
type RunFunc func(ctx context.Context, configPath string, args []string) error

// Main parses -config, runs fn until SIGINT/SIGTERM and returns the process exit code:
// 0 on a clean stop, 2 for bad flags, 1 for any other error (printed to stderr).
func Main(name string, args []string, stderr io.Writer, fn RunFunc, opts ...Option) int {
	var o options
	for _, opt := range opts {
		opt(&o)
	}
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	configPath := fs.String("config", os.Getenv(EnvConfig), "path to the YAML config file (env "+EnvConfig+"); defaults are used when empty")
	showVersion := fs.Bool("version", false, "print the version and commit this binary was built from, and exit")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: %s [-config file.yaml] [subcommand]\n       %s healthcheck <url>   probe a /healthz URL (exit 0 when it answers 200)\n", name, name)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	if *showVersion {
		fmt.Fprintln(os.Stdout, name, buildinfo.Get())
		return 0
	}
	if rest := fs.Args(); len(rest) > 0 && rest[0] == "healthcheck" {
		// Container images have no curl: the binary probes its own /healthz.
		return healthcheck(rest[1:], stderr)
	}
	nice, err := niceFor(o.nice, os.LookupEnv)
	if err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", name, err)
		return 1
	}
	if nice > 0 {
		// The priority only orders the work on a busy machine: a service that cannot lower it
		// (no /proc, a seccomp profile) runs at the one it was started with.
		if err := lowerPriority(nice); err != nil {
			fmt.Fprintf(stderr, "%s: warning: %v; running at the priority it was started with\n", name, err)
		}
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// An idle service holds only what it uses: the heap a burst grew and the pages of the binary
	// only the start needed go back to the system.
	go idlemem.Keep(ctx, idlemem.DefaultFirst, idlemem.DefaultWindow)
	idlemem.GCPercent(idlemem.ServiceGCPercent)
	if err := fn(ctx, *configPath, fs.Args()); err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", name, err)
		return 1
	}
	return 0
}

func healthcheck(args []string, stderr io.Writer) int {
	if len(args) != 1 {
		fmt.Fprintln(stderr, "usage: healthcheck <url>")
		return 2
	}
	client := &http.Client{Timeout: 3 * time.Second}
	res, err := client.Get(args[0])
	if err != nil {
		fmt.Fprintf(stderr, "healthcheck: %v\n", err)
		return 1
	}
	defer res.Body.Close()
	if res.StatusCode != http.StatusOK {
		fmt.Fprintf(stderr, "healthcheck: %s answered %s\n", args[0], res.Status)
		return 1
	}
	return 0
}

// Config is a service configuration: a struct that holds its defaults and validates itself.
type Config[C any] interface {
	*C
	config.Validator
}

// Serve is the whole main of a service without subcommands: it loads the configuration over
// the defaults and runs the service with it (see Main).
func Serve[C any, P Config[C]](name string, defaults func() C, run func(context.Context, C) error, opts ...Option) int {
	return Main(name, os.Args[1:], os.Stderr, func(ctx context.Context, configPath string, _ []string) error {
		cfg := defaults()
		if err := config.Load(configPath, P(&cfg)); err != nil {
			return err
		}
		return run(ctx, cfg)
	}, opts...)
}

// Sleep waits d or until ctx ends (its error then).
func Sleep(ctx context.Context, d time.Duration) error {
	if d <= 0 {
		return ctx.Err()
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return ctx.Err()
	case <-t.C:
		return nil
	}
}

// Every calls fn every interval until ctx ends (the first call one interval from now). After
// each call the pages of the binary it ran are handed back (idlemem.Settle).
func Every(ctx context.Context, every time.Duration, fn func()) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			fn()
			idlemem.Settle()
		}
	}
}
