package cli

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"

	"github.com/spf13/cobra"

	suiteconfig "github.com/picoclaw-suite/picoclaw/config"
	"github.com/picoclaw-suite/picoclaw/pkg/config"
	"github.com/picoclaw-suite/picoclaw/pkg/fault"
	"github.com/picoclaw-suite/picoclaw/pkg/svcauth"
)

// newConfigCmd is `picoclaw config check|print|example`: the suite's config file as the services
// read it, and the example to start one from.
func newConfigCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use: "config", Short: "check the suite config file, print the effective configuration (secrets masked) or the example",
		Args: groupArgs, RunE: groupRun, Annotations: map[string]string{annotNoConfig: "yes"},
	}
	check := &cobra.Command{
		Use:   "check",
		Short: "check the config file and the environment: unknown keys, wrong types, invalid values (exit 1 when any)",
		Long: "Check the config file (--config or PICOCLAW_CONFIG) and the PICOCLAW_* environment as `picoclaw run` reads them:\n" +
			"every key must be one a service reads (a mistyped key is named with its path and the key meant),\n" +
			"every value must have its key's type, and every service's checks must pass. Every problem is listed;\n" +
			"the exit code is 1 when there is any. The service binaries make the same key and type checks on start.",
		Args: noArgs,
		RunE: func(*cobra.Command, []string) error { return checkConfig(g) },
	}
	var service string
	print := &cobra.Command{
		Use:   "print [--service NAME]",
		Short: "print the effective configuration (defaults, file, environment) as YAML, secrets masked",
		Args:  noArgs,
		RunE:  func(*cobra.Command, []string) error { return printConfig(g, service) },
	}
	print.Flags().StringVar(&service, "service", "", "only this service's view of the file (approval, executor, …)")
	names := []string{}
	for _, s := range defaultSuiteConfigs().each() {
		names = append(names, s.name)
	}
	_ = print.RegisterFlagCompletionFunc("service", fixedCompletions(names...))
	example := &cobra.Command{
		Use:   "example",
		Short: "print the example config file: every key with its default and what it does",
		Long: "Print config/picoclaw.example.yaml as built into this binary: every key of the suite's configuration,\n" +
			"commented, with its default. Start a config file from it: picoclaw config example > picoclaw.yaml",
		Args: noArgs,
		RunE: func(*cobra.Command, []string) error {
			_, err := g.io.Out.Write(suiteconfig.Example())
			return err
		},
	}
	cmd.AddCommand(check, print, example)
	return cmd
}

// configProblems is the failure of `config check` (and `config print`): the problems found in
// source, one a line — each the config's own words, naming the key's path.
func configProblems(source any, err error) error {
	if fault.MessageOf(err) != nil {
		return &apiError{code: ExitError, err: err} // the file cannot be read: nothing was checked
	}
	list := flatten(err)
	lines := make([]string, len(list))
	for i, e := range list {
		lines[i] = "  " + strings.ReplaceAll(e.Error(), "\n", "\n  ")
	}
	return failureOver(ExitError, err, txtConfigProblems, source, len(list), strings.Join(lines, "\n"))
}

// configSource names the config file, or says there is none.
func configSource(path string) any {
	if path == "" {
		return fault.Term(txtConfigNoFile)
	}
	return path
}

func checkConfig(g *globals) error {
	c := defaultSuiteConfigs()
	source := configSource(g.cfgPath)
	if err := c.load(g.cfgPath, g.lookupEnv()); err != nil {
		return configProblems(source, err)
	}
	keys, err := svcauth.GenerateSuite()
	if err != nil {
		return err
	}
	// Validated as `picoclaw run` runs it: its own topology, stores and credentials over the file.
	c.embed(embedded{dataDir: g.dataDirOr(""), services: c.ap.Services, keys: keys, user: defaultUser(g),
		auditKey: randomHex(), loginToken: randomHex(), lookupEnv: g.io.Getenv})
	if err := c.validate(c.lineConfigured(), c.slackConfigured()); err != nil {
		return configProblems(source, err)
	}
	name := g.cfgPath
	if name == "" {
		name = say(g.locale, txtConfigNoFile)
	}
	fmt.Fprintf(g.io.Out, "%s: %s\n", name, msg(g.locale, "問題ありません", "OK"))
	return nil
}

func printConfig(g *globals, service string) error {
	c := defaultSuiteConfigs()
	if err := c.load(g.cfgPath, g.lookupEnv()); err != nil {
		return configProblems(configSource(g.cfgPath), err)
	}
	var configs []any
	var names []string
	for _, s := range c.each() {
		names = append(names, s.name)
		if service == "" || service == s.name {
			configs = append(configs, s.cfg)
		}
	}
	if len(configs) == 0 {
		return usage(txtConfigService, strings.Join(names, ", "), strconv.Quote(service))
	}
	out, err := config.Effective(configs...)
	if err != nil {
		return err
	}
	source := g.cfgPath
	if source == "" {
		source = "none"
	}
	fmt.Fprintf(g.io.Out, "# effective configuration: defaults, file (%s), PICOCLAW_* environment\n", source)
	fmt.Fprintln(g.io.Out, "# (`picoclaw run` puts its own services, state, auth and approval store over these)")
	_, err = g.io.Out.Write(out)
	return err
}

func randomHex() string {
	var b [32]byte
	_, _ = rand.Read(b[:])
	return hex.EncodeToString(b[:])
}
