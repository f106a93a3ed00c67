// Package runner is the shared body of every service's main: flags, signals, exit codes.
package runner

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"os/signal"
	"syscall"
)

// EnvConfig names the config file when -config is not given.
const EnvConfig = "PICOCLAW_CONFIG"

// RunFunc runs the service until ctx ends. args are the arguments left after the flags
// (a subcommand such as "migrate").
type RunFunc func(ctx context.Context, configPath string, args []string) error

// Main parses -config, runs fn until SIGINT/SIGTERM and returns the process exit code:
// 0 on a clean stop, 2 for bad flags, 1 for any other error (printed to stderr).
func Main(name string, args []string, stderr io.Writer, fn RunFunc) int {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	configPath := fs.String("config", os.Getenv(EnvConfig), "path to the YAML config file (env "+EnvConfig+"); defaults are used when empty")
	fs.Usage = func() {
		fmt.Fprintf(stderr, "usage: %s [-config file.yaml] [subcommand]\n", name)
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		if errors.Is(err, flag.ErrHelp) {
			return 0
		}
		return 2
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := fn(ctx, *configPath, fs.Args()); err != nil {
		fmt.Fprintf(stderr, "%s: %v\n", name, err)
		return 1
	}
	return 0
}
