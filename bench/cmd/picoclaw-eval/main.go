// Command picoclaw-eval measures the coders on real tasks. For every provider whose API key is
// set (OPENAI_API_KEY, DEEPSEEK_API_KEY, ANTHROPIC_API_KEY; Ollama when it answers at
// OLLAMA_HOST or -ollama-base-url and has the model) and every task of bench/testdata/eval, it starts the
// real approval, executor and coder-order binaries on a fresh copy of the fixture, asks
// coder-order for a proposal, has it approved and executed, runs `go test ./...` and the task's
// checks, and writes eval.json and eval.md. Providers without a key are reported as skipped.
//
// The tests of the code a model wrote run on this machine (with a minimal environment and no
// API keys): run it where that is acceptable.
//
// Usage: picoclaw-eval [-out bench/results] [-tasks id,...] [-providers openai,...]
// [-<provider>-model M] [-<provider>-base-url URL] [-prices model=in/out,...]
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/picoclaw-suite/picoclaw/pkg/llm"

	"github.com/picoclaw-suite/picoclaw/bench/internal/eval"
	"github.com/picoclaw-suite/picoclaw/bench/internal/suite"
)

type options struct {
	out, data, tasks, only, prices string
	models, baseURLs               map[string]*string
	callTimeout                    time.Duration
	numCtx                         int
}

func main() {
	o := options{models: map[string]*string{}, baseURLs: map[string]*string{}}
	flag.StringVar(&o.out, "out", "bench/results", "directory for eval.json, eval.md and the workspaces and logs of every task (under eval/)")
	flag.StringVar(&o.data, "data", "bench/testdata/eval", "directory holding fixture/ and tasks/")
	flag.StringVar(&o.tasks, "tasks", "", "task ids to run, comma separated (default: all)")
	flag.StringVar(&o.only, "providers", "", "providers to run, comma separated (default: every one with a key)")
	flag.StringVar(&o.prices, "prices", "", "prices of models coder-order has none for: model=input/output USD per million tokens, comma separated")
	flag.DurationVar(&o.callTimeout, "call-timeout", 120*time.Second, "bound of each model call")
	flag.IntVar(&o.numCtx, "ollama-num-ctx", 16384, "context length of the Ollama order")
	for _, d := range eval.DefaultModels {
		o.models[d.Provider] = flag.String(d.Provider+"-model", d.Model, "model asked of "+d.Provider)
		def := "the provider's API"
		if d.Provider == llm.ProviderOllama {
			def = "OLLAMA_HOST, else " + llm.DefaultOllamaURL
		}
		o.baseURLs[d.Provider] = flag.String(d.Provider+"-base-url", "", d.Provider+" base URL (default: "+def+")")
	}
	flag.Parse()

	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	if err := run(ctx, o); err != nil {
		fmt.Fprintln(os.Stderr, "picoclaw-eval:", err)
		os.Exit(1)
	}
}

func logf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "%s "+format+"\n", append([]any{time.Now().Format("15:04:05")}, args...)...)
}

func run(ctx context.Context, o options) (err error) {
	wd, err := os.Getwd()
	if err != nil {
		return err
	}
	root, err := suite.Root(wd)
	if err != nil {
		return err
	}
	for _, p := range []*string{&o.out, &o.data} {
		if !filepath.IsAbs(*p) {
			*p = filepath.Join(root, *p)
		}
	}
	tasks, err := eval.LoadTasks(filepath.Join(o.data, "tasks"), split(o.tasks)...)
	if err != nil {
		return err
	}
	prices, err := parsePrices(o.prices)
	if err != nil {
		return err
	}
	det := eval.DetectOptions{LookupEnv: os.LookupEnv, Prices: prices, Only: split(o.only),
		Models: map[string]string{}, BaseURLs: map[string]string{}}
	for name, m := range o.models {
		det.Models[name], det.BaseURLs[name] = *m, *o.baseURLs[name]
	}
	providers := eval.Detect(ctx, det)
	runnable := 0
	for _, p := range providers {
		if p.Skip == "" {
			runnable++
		} else {
			logf("%s: skipped: %s", p.Name, p.Skip)
		}
	}
	opts := eval.Options{Root: root, Fixture: filepath.Join(o.data, "fixture"), Tasks: tasks, Providers: providers,
		WorkDir: filepath.Join(o.out, "eval"), CallTimeout: o.callTimeout, OllamaNumCtx: o.numCtx, Logf: logf}
	if runnable > 0 {
		bin, iso, done, err := suite.Prepare(ctx, root, "picoclaw-eval", logf)
		if err != nil {
			return err
		}
		defer func() { err = errors.Join(err, done()) }()
		opts.BinDir, opts.Iso = bin, iso
	}
	rep := eval.Run(ctx, opts)
	rep.Commit = suite.GitCommit(root)
	if err := rep.Write(o.out); err != nil {
		return err
	}
	rep.SummaryTable(os.Stdout)
	logf("report written to %s (eval.md, eval.json); workspaces and logs under %s", o.out, opts.WorkDir)
	if n := rep.HarnessErrors(); n > 0 {
		return fmt.Errorf("%d tasks could not be run (see the report)", n)
	}
	return ctx.Err()
}

func split(s string) []string {
	var out []string
	for _, f := range strings.Split(s, ",") {
		if f = strings.TrimSpace(f); f != "" {
			out = append(out, f)
		}
	}
	return out
}

// parsePrices reads model=input/output entries.
func parsePrices(s string) (map[string]llm.Price, error) {
	out := map[string]llm.Price{}
	for _, e := range split(s) {
		model, pair, ok1 := strings.Cut(e, "=")
		in, outp, ok2 := strings.Cut(pair, "/")
		pin, err1 := strconv.ParseFloat(in, 64)
		pout, err2 := strconv.ParseFloat(outp, 64)
		if !ok1 || !ok2 || err1 != nil || err2 != nil || model == "" || pin < 0 || pout < 0 {
			return nil, fmt.Errorf("-prices: %q is not model=input/output", e)
		}
		out[model] = llm.Price{InputPerMTok: pin, OutputPerMTok: pout}
	}
	return out, nil
}
