package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/signal"
	"slices"
	"strconv"
	"strings"
	"syscall"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/picoclaw-suite/picoclaw/pkg/buildinfo"
	"github.com/picoclaw-suite/picoclaw/pkg/config"
	"github.com/picoclaw-suite/picoclaw/pkg/fault"
)

// Annotations on commands.
const (
	// annotNoConfig marks a command that does not read the suite config before it runs (it
	// reads it itself, or needs none).
	annotNoConfig = "picoclaw/no-config"
	// annotState marks a command that talks to the suite `picoclaw run` recorded in the state
	// file when no URL, token or config names another one.
	annotState = "picoclaw/state"
)

// Main runs the CLI and returns the exit code.
func Main(args []string, stdio IO) int {
	g := &globals{io: stdio}
	root := newRoot(g)
	if args == nil {
		args = []string{} // nil would make cobra read os.Args
	}
	root.SetArgs(args)
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()
	// After the first signal the default handling returns: a second Ctrl-C ends the process.
	context.AfterFunc(ctx, stop)
	cmd, err := root.ExecuteContextC(ctx)
	return exitCode(g, cmd, err)
}

// newRoot builds the command tree.
func newRoot(g *globals) *cobra.Command {
	root := &cobra.Command{
		Use:   "picoclaw",
		Short: "the PicoClaw Suite's command line",
		Long: "The PicoClaw Suite's command line: the whole suite in one process (`picoclaw run`), a terminal chat,\n" +
			"the approval commands and the operator's tools.",
		SilenceErrors:     true,
		SilenceUsage:      true,
		Args:              rootArgs,
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error { return g.prepare(cmd) },
	}
	// Not cobra's Version: its --version prints through text/template, whose reflection keeps
	// every method of every linked type in the binary (about 7 MB here).
	var showVersion bool
	root.Flags().BoolVarP(&showVersion, "version", "v", false, "print the version and exit")
	root.RunE = func(cmd *cobra.Command, _ []string) error {
		if showVersion {
			fmt.Fprintln(g.io.Out, "picoclaw", buildinfo.Get())
			return nil
		}
		printHelp(cmd)
		return errUsageShown
	}
	root.SetIn(g.io.In)
	root.SetOut(g.io.Out)
	root.SetErr(g.io.Err)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return flagError(err) })
	root.SetHelpFunc(func(cmd *cobra.Command, _ []string) { printHelp(cmd) })
	root.SetUsageFunc(func(cmd *cobra.Command) error { printHelp(cmd); return nil })
	root.SuggestionsMinimumDistance = 2
	root.CompletionOptions.DisableDefaultCmd = true

	pf := root.PersistentFlags()
	pf.StringVar(&g.cfgPath, "config", g.io.Getenv("PICOCLAW_CONFIG"), "suite config file (env PICOCLAW_CONFIG); service URLs come from it")
	pf.StringVar(&g.locale, "locale", "", "ja or en (default: the config's locale)")
	pf.StringVar(&g.restURL, "approval-url", "", "approval REST base URL (default: the running suite's, else services.approval.public_url)")
	pf.StringVar(&g.statePath, "state", "", "the run state file that picoclaw run writes and the approval and status commands read\n(env PICOCLAW_STATE_FILE; default $XDG_STATE_HOME/picoclaw/run.json)")
	_ = root.RegisterFlagCompletionFunc("locale", fixedCompletions("ja", "en"))
	_ = root.MarkPersistentFlagFilename("config", "yaml", "yml")
	_ = root.MarkPersistentFlagFilename("state", "json")

	root.AddCommand(
		newRunCmd(g), newChatCmd(g),
		newJobsCmd(g), newJobCmd(g), newApproveCmd(g), newDenyCmd(g), newAutoApproveCmd(g), newStatusCmd(g),
		newDeadLettersCmd(g), newAuditCmd(g), newImagesCmd(g), newDataCmd(g), newPolicyCmd(g), newConfigCmd(g),
		newKeysCmd(g), newDoctorCmd(g), newModelsCmd(g), newVersionCmd(g),
	)
	root.AddCommand(newCompletionCmd(root))
	root.InitDefaultHelpCmd()
	for _, c := range root.Commands() {
		if c.Name() == "help" {
			c.Short = "show a command's help: its usage line, flags and their defaults"
		}
	}
	return root
}

// newCompletionCmd prints a completion script; the shells call back `picoclaw __complete …`
// (cobra's), so flags, subcommands and fixed values complete as the binary defines them.
func newCompletionCmd(root *cobra.Command) *cobra.Command {
	shells := []string{"bash", "zsh", "fish", "powershell"}
	return &cobra.Command{
		Use:   "completion bash|zsh|fish|powershell",
		Short: "print a shell completion script (bash, zsh, fish or powershell)",
		Long: "Print the shell completion script for picoclaw: commands, flags and their fixed values complete.\n" +
			"  bash:  source <(picoclaw completion bash)        # or write it to /etc/bash_completion.d/picoclaw\n" +
			"  zsh:   picoclaw completion zsh > \"${fpath[1]}/_picoclaw\"\n" +
			"  fish:  picoclaw completion fish > ~/.config/fish/completions/picoclaw.fish",
		ValidArgs:   shells,
		Annotations: map[string]string{annotNoConfig: "yes"},
		Args: func(_ *cobra.Command, args []string) error {
			if len(args) != 1 || !slices.Contains(shells, args[0]) {
				return usage(txtArgsShell)
			}
			return nil
		},
		RunE: func(cmd *cobra.Command, args []string) error {
			w := cmd.OutOrStdout()
			switch args[0] {
			case "bash":
				return root.GenBashCompletionV2(w, true)
			case "zsh":
				return root.GenZshCompletion(w)
			case "fish":
				return root.GenFishCompletion(w, true)
			}
			return root.GenPowerShellCompletionWithDesc(w)
		},
	}
}

// rootArgs refuses an unknown command (with cobra's suggestion when one is close).
func rootArgs(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		return nil
	}
	if s := cmd.SuggestionsFor(args[0]); len(s) > 0 {
		return usage(txtCmdUnknownHint, strconv.Quote(args[0]), strings.Join(s, ", "))
	}
	return usage(txtCmdUnknown, strconv.Quote(args[0]))
}

// flagError is a mistake in the flags (pflag's), said by what it is.
func flagError(err error) error {
	var (
		notExist *pflag.NotExistError
		needs    *pflag.ValueRequiredError
		invalid  *pflag.InvalidValueError
		syntax   *pflag.InvalidSyntaxError
	)
	switch {
	case errors.As(err, &notExist):
		if notExist.GetSpecifiedShortnames() != "" {
			return usage(txtFlagUnknown, "-"+notExist.GetSpecifiedName()[:1])
		}
		return usage(txtFlagUnknown, "--"+notExist.GetSpecifiedName())
	case errors.As(err, &needs):
		if needs.GetSpecifiedShortnames() != "" {
			return usage(txtFlagNeedsValue, "-"+needs.GetSpecifiedName()[:1])
		}
		return usage(txtFlagNeedsValue, "--"+needs.GetSpecifiedName())
	case errors.As(err, &invalid):
		return usage(txtFlagValue, "--"+invalid.GetFlag().Name, strconv.Quote(invalid.GetValue()), flagType(invalid.GetFlag()))
	case errors.As(err, &syntax):
		return usage(txtFlagSyntax, syntax.GetSpecifiedFlag())
	}
	return &usageError{texts.Wrap(nil, err, txtFlagOther, err.Error())}
}

// flagType is what a flag's value must be, as a word of texts.
func flagType(f *pflag.Flag) fault.Term {
	switch f.Value.Type() {
	case "int", "int8", "int16", "int32", "int64", "uint", "uint8", "uint16", "uint32", "uint64":
		return txtTypeInt
	case "float32", "float64":
		return txtTypeNumber
	case "duration":
		return txtTypeDuration
	case "bool":
		return txtTypeBool
	}
	return txtTypeValue
}

// errUsageShown: the help was printed in place of a command that was missing (exit 2).
var errUsageShown = errors.New("usage shown")

// prepare reads the suite config and the run state before a command runs.
func (g *globals) prepare(cmd *cobra.Command) error {
	if !cmd.HasParent() {
		return nil // the root itself only prints its help or the version
	}
	for c := cmd; c != nil; c = c.Parent() {
		if c.Annotations[annotNoConfig] != "" || c.Name() == cobra.ShellCompRequestCmd || c.Name() == cobra.ShellCompNoDescRequestCmd {
			g.locale = g.outputLocale()
			return nil
		}
	}
	cfg := config.DefaultCommon()
	if err := loadCommon(g.cfgPath, &cfg, g.lookupEnv()); err != nil {
		return &usageError{err}
	}
	g.cfg = cfg
	if g.locale == "" {
		g.locale = cfg.Locale
	}
	g.token = g.io.Getenv("PICOCLAW_TOKEN")
	if cmd.Annotations[annotState] != "" {
		return g.useRunState()
	}
	return nil
}

// groupArgs refuses a group command's unknown subcommand.
func groupArgs(cmd *cobra.Command, args []string) error {
	if len(args) == 0 {
		return nil
	}
	return usage(txtSubUnknown, cmd.Name(), strconv.Quote(args[0]), subcommandNames(cmd))
}

// groupRun is the run of a group command called without a subcommand: a usage error.
func groupRun(cmd *cobra.Command, _ []string) error {
	return usage(txtSubExpected, subcommandNames(cmd))
}

func subcommandNames(cmd *cobra.Command) string {
	var names []string
	for _, c := range cmd.Commands() {
		if c.IsAvailableCommand() {
			names = append(names, c.Name())
		}
	}
	return strings.Join(names, ", ")
}

// noArgs, exactArgs and rangeArgs check positional arguments; a mistake is a usage error.
func noArgs(_ *cobra.Command, args []string) error {
	if len(args) > 0 {
		return usage(txtArgUnexpected, strconv.Quote(args[0]))
	}
	return nil
}

// exactArgs wants n arguments; code says what they are.
func exactArgs(n int, code string) cobra.PositionalArgs {
	return func(_ *cobra.Command, args []string) error {
		if len(args) != n {
			return usage(code)
		}
		return nil
	}
}

// fixedCompletions completes a flag or argument from a fixed list.
func fixedCompletions(values ...string) cobra.CompletionFunc {
	return cobra.FixedCompletions(values, cobra.ShellCompDirectiveNoFileComp)
}

// printHelp writes a command's help: its usage line, what it does, its subcommands and flags.
func printHelp(cmd *cobra.Command) {
	w := cmd.OutOrStdout()
	fmt.Fprintf(w, "usage: %s\n", useLine(cmd))
	desc := cmd.Long
	if desc == "" {
		desc = cmd.Short
	}
	if desc = strings.TrimSpace(desc); desc != "" {
		fmt.Fprintf(w, "\n%s\n", desc)
	}
	if cmd.HasAvailableSubCommands() {
		fmt.Fprintln(w, "\ncommands:")
		for _, c := range cmd.Commands() {
			if c.IsAvailableCommand() || c.Name() == "help" {
				fmt.Fprintf(w, "  %-13s %s\n", c.Name(), c.Short)
			}
		}
	}
	if cmd.HasAvailableLocalFlags() {
		fmt.Fprintf(w, "\nflags:\n%s", cmd.LocalFlags().FlagUsages())
	}
	if cmd.HasAvailableInheritedFlags() {
		fmt.Fprintf(w, "\nglobal flags:\n%s", cmd.InheritedFlags().FlagUsages())
	}
	if cmd.Example != "" {
		fmt.Fprintf(w, "\nexamples:\n%s\n", cmd.Example)
	}
	if !cmd.HasParent() {
		fmt.Fprintln(w, "\n`picoclaw help <command>` or `picoclaw <command> --help` shows a command's flags.")
		fmt.Fprintln(w, "The approval and dead-letter commands send the approver's token in PICOCLAW_TOKEN; without a token,")
		fmt.Fprintln(w, "URL or config they talk to the suite `picoclaw run` recorded in the state file.")
		fmt.Fprintf(w, "\nexit codes: %d ok, %d error, %d usage, %d not found, %d conflict (already decided), %d unauthorized/forbidden, %d service unavailable, %d audit log tampered\n",
			ExitOK, ExitError, ExitUsage, ExitNotFound, ExitConflict, ExitUnauthorized, ExitUnavailable, ExitTampered)
	}
}

// useLine is the command's path with the arguments its Use names.
func useLine(cmd *cobra.Command) string {
	line := cmd.CommandPath()
	if _, rest, ok := strings.Cut(cmd.Use, " "); ok {
		line += " " + rest
	} else if cmd.HasAvailableSubCommands() {
		line += " <command>"
	}
	if cmd.HasAvailableFlags() && !strings.Contains(line, "[flags]") {
		line += " [flags]"
	}
	return line
}

// outputFlag is --output text|json (-o), with --json kept as its old spelling.
type outputFlag struct {
	format string
	json   bool
}

func (o *outputFlag) register(cmd *cobra.Command) {
	cmd.Flags().StringVarP(&o.format, "output", "o", "text", "text or json (field names in docs/cli.md)")
	cmd.Flags().BoolVar(&o.json, "json", false, "same as --output json")
	_ = cmd.Flags().MarkHidden("json")
	_ = cmd.RegisterFlagCompletionFunc("output", fixedCompletions("text", "json"))
}

// isJSON reports whether JSON was asked for; another format is a usage error.
func (o *outputFlag) isJSON() (bool, error) {
	switch o.format {
	case "json":
		return true, nil
	case "text", "":
		return o.json, nil
	}
	return false, usage(txtOutput, strconv.Quote(o.format))
}

// flagChanged reports whether the user set the flag.
func flagChanged(fs *pflag.FlagSet, name string) bool {
	f := fs.Lookup(name)
	return f != nil && f.Changed
}

func newVersionCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use: "version", Short: "print the version and commit this binary was built from",
		Args: noArgs, Annotations: map[string]string{annotNoConfig: "yes"},
		RunE: func(*cobra.Command, []string) error {
			fmt.Fprintln(g.io.Out, "picoclaw", buildinfo.Get())
			return nil
		},
	}
}

// exitCode reports err (once, on standard error) in the user's language and maps it to the exit
// code. With -o json the report is a JSON object {"code", "message"}: the code is stable, the
// message is for people.
func exitCode(g *globals, cmd *cobra.Command, err error) int {
	if err == nil {
		return ExitOK
	}
	if errors.Is(err, errUsageShown) {
		return ExitUsage
	}
	var ue *usageError
	isUsage := errors.As(err, &ue)
	if !isUsage && errors.Is(err, context.Canceled) {
		return ExitOK
	}
	code := ExitUsage
	if !isUsage {
		code = codeOf(err)
	}
	locale := g.outputLocale()
	text := sayError(err, locale)
	w := g.io.Err
	if wantsJSON(cmd) {
		if m := fault.MessageOf(err); m != nil && m.Code == txtRESTError {
			text = m.Args[0] // the service's message; its code is the object's
		}
		_ = json.NewEncoder(w).Encode(map[string]string{"code": errorCode(err), "message": text})
		return code
	}
	name := "picoclaw"
	if cmd != nil && cmd.HasParent() {
		name = cmd.CommandPath()
	}
	fmt.Fprintf(w, "%s: %s\n", name, text)
	if isUsage && cmd != nil {
		fmt.Fprintln(w, say(locale, txtUsageHint, useLine(cmd), cmd.CommandPath()))
	}
	return code
}

// wantsJSON reports whether the command was asked for JSON (-o json, --json).
func wantsJSON(cmd *cobra.Command) bool {
	if cmd == nil {
		return false
	}
	if f := cmd.Flags().Lookup("output"); f != nil && f.Value.String() == "json" {
		return true
	}
	f := cmd.Flags().Lookup("json")
	return f != nil && f.Value.String() == "true"
}

// outputLocale is the language the CLI reports in: --locale, else the config's (known once the
// command read it), else PICOCLAW_LOCALE, else the config file's when it can be read, else ja.
func (g *globals) outputLocale() string {
	if g.locale != "" {
		return g.locale
	}
	if l := g.io.Getenv("PICOCLAW_LOCALE"); l != "" {
		return l
	}
	cfg := config.DefaultCommon()
	if g.cfgPath != "" && loadCommon(g.cfgPath, &cfg, g.lookupEnv()) == nil {
		return cfg.Locale
	}
	return "ja"
}
