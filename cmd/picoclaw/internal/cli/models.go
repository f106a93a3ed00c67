package cli

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	modelfiles "github.com/picoclaw-suite/picoclaw/deploy/ollama"
	"github.com/picoclaw-suite/picoclaw/pkg/fault"
	"github.com/picoclaw-suite/picoclaw/pkg/llm"
	"github.com/picoclaw-suite/picoclaw/pkg/llm/ollama"
	coderorder "github.com/picoclaw-suite/picoclaw/services/coder-order/service"
)

// localModel is one configured model that runs on Ollama, with the agent (or order) using it.
type localModel struct {
	Agents []string
	Config llm.Config
}

// localModels are the configured models on provider ollama (agents.chat, agents.worker, and any
// enabled order on ollama), one entry per model name, with the ollama section merged in.
func localModels(c *suiteConfigs) (base string, models []localModel) {
	add := func(agent string, cfg llm.Config) {
		cfg = cfg.WithDefaults()
		if cfg.Provider != llm.ProviderOllama {
			return
		}
		for i := range models {
			if canonicalModel(models[i].Config.Model) == canonicalModel(cfg.Model) && models[i].Config.BaseURL == cfg.BaseURL {
				models[i].Agents = append(models[i].Agents, agent)
				return
			}
		}
		models = append(models, localModel{Agents: []string{agent}, Config: cfg})
	}
	add("chat", c.cm.Agents.Chat.WithOllama(c.cm.Ollama))
	add("worker", c.rs.Agents.Worker.Config.WithOllama(c.rs.Ollama))
	if v := c.cm.Models.Vision; strings.TrimSpace(v.Model) != "" {
		// models.vision (images) defaults to Ollama; a model without a Modelfile of ours is pulled.
		if v.Provider == "" {
			v.Provider = llm.ProviderOllama
		}
		add("vision", v.WithOllama(c.cm.Ollama))
	}
	for i, o := range []coderorder.Order{c.co.Orders.Order1, c.co.Orders.Order2, c.co.Orders.Order3} {
		if o.Enabled {
			add(fmt.Sprintf("order%d", i+1), o.Config.WithOllama(c.co.Ollama))
		}
	}
	return strings.TrimRight(c.cm.Ollama.BaseURL, "/"), models
}

func canonicalModel(name string) string {
	if !strings.Contains(name, ":") {
		return name + ":latest"
	}
	return name
}

func newModelsCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use:   "models",
		Short: "install and check the local models (Ollama) the chat and worker agents use",
		Long: "The chat (Mio) and worker (Shiro) agents run on local Ollama models, chat-v1 and worker-v1 by default.\n" +
			"`picoclaw models setup` pulls each one's base model and creates it from the suite's Modelfile\n" +
			"(deploy/ollama); `picoclaw models status` shows whether each is present and its context length.",
		Args: groupArgs, RunE: groupRun,
	}
	cmd.AddCommand(newModelsStatusCmd(g), newModelsSetupCmd(g))
	return cmd
}

func newModelsStatusCmd(g *globals) *cobra.Command {
	var output outputFlag
	cmd := &cobra.Command{
		Use: "status", Aliases: []string{"list"}, Short: "show each configured local model: present, context length, problems",
		Long: "Show each configured local model (agents.chat, agents.worker, orders on ollama) on the Ollama server of\n" +
			"ollama.base_url: whether it is present, its context length and model file num_ctx against\n" +
			"ollama.max_context, and the command that fixes a problem.\n" +
			"Exit code 0 when every model is usable, 1 when one is not, 6 when Ollama cannot be reached.",
		Args: noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error { return runModelsStatus(cmd.Context(), g, output) },
	}
	output.register(cmd)
	return cmd
}

// modelsReport is the -o json answer of models status and models setup (docs/cli.md).
type modelsReport struct {
	BaseURL   string        `json:"base_url"`
	Reachable bool          `json:"reachable"`
	Models    []modelReport `json:"models"`
}

type modelReport struct {
	ollama.ModelStatus
	Agents []string `json:"agents"`
	// Action is what setup did: present (left alone), created, recreated, pulled, failed.
	Action string `json:"action,omitempty"`
	From   string `json:"from,omitempty"`
	Error  string `json:"error,omitempty"`
}

func loadSuite(g *globals) (*suiteConfigs, error) {
	c := defaultSuiteConfigs()
	if err := c.load(g.cfgPath, g.lookupEnv()); err != nil {
		if fault.MessageOf(err) != nil {
			return nil, &usageError{err}
		}
		return nil, &usageError{texts.Wrap(nil, err, txtConfigInvalid, err.Error())}
	}
	return c, nil
}

func runModelsStatus(ctx context.Context, g *globals, output outputFlag) error {
	jsonOut, err := output.isJSON()
	if err != nil {
		return err
	}
	c, err := loadSuite(g)
	if err != nil {
		return err
	}
	base, models := localModels(c)
	api := ollama.NewAPI(base, nil)
	rep := modelsReport{BaseURL: base}
	for _, m := range models {
		st := ollama.Check(ctx, ollama.NewAPI(m.Config.BaseURL, nil), m.Config.Model, m.Config.NumCtx, m.Config.MaxContext)
		rep.Reachable = rep.Reachable || st.Reachable
		rep.Models = append(rep.Models, modelReport{ModelStatus: st, Agents: m.Agents})
	}
	if len(models) == 0 {
		_, lerr := api.List(ctx)
		rep.Reachable = lerr == nil
	}
	if jsonOut {
		if err := writeJSON(g.io.Out, rep); err != nil {
			return err
		}
	} else {
		printModels(g, rep)
	}
	return modelsOutcome(g, rep)
}

// modelsOutcome is the exit status of a report: unavailable when Ollama cannot be reached, an
// error when a model is not usable.
func modelsOutcome(g *globals, rep modelsReport) error {
	if len(rep.Models) > 0 && !rep.Reachable {
		return &apiError{code: ExitUnavailable, reason: "ollama_unreachable", err: errors.New(msg(g.locale,
			"Ollama（"+rep.BaseURL+"）に接続できません。Ollama を起動してください（ollama serve）",
			"Ollama at "+rep.BaseURL+" cannot be reached: start it (ollama serve)"))}
	}
	var bad []string
	for _, m := range rep.Models {
		if !m.OK() {
			bad = append(bad, m.Model)
		}
	}
	if len(bad) > 0 {
		return &apiError{code: ExitError, reason: "models_not_usable", err: errors.New(msg(g.locale, "使えないモデルがあります: ", "models not usable: ") + strings.Join(bad, ", "))}
	}
	return nil
}

func printModels(g *globals, rep modelsReport) {
	w := g.io.Out
	fmt.Fprintf(w, "Ollama %s\n", rep.BaseURL)
	if len(rep.Models) == 0 {
		fmt.Fprintln(w, msg(g.locale, "  Ollama を使うモデルは設定されていません。", "  No configured model runs on Ollama."))
		return
	}
	for _, m := range rep.Models {
		state := msg(g.locale, "OK", "ok")
		switch {
		case !m.Reachable:
			state = msg(g.locale, "接続できません", "unreachable")
		case !m.Present:
			state = msg(g.locale, "ありません", "missing")
		case !m.OK():
			state = msg(g.locale, "設定に問題があります", "misconfigured")
		}
		fmt.Fprintf(w, "  %-22s %-14s %s", m.Model, strings.Join(m.Agents, ","), state)
		if m.Present {
			fmt.Fprintf(w, msg(g.locale, "  コンテキスト長 %d、モデルの num_ctx %d、num_ctx %d（max_context %d）",
				"  context %d, model num_ctx %d, num_ctx %d (max_context %d)"), m.ContextLength, m.ModelNumCtx, m.NumCtx, m.MaxContext)
		}
		fmt.Fprintln(w)
		if !m.OK() && m.Reachable {
			fmt.Fprintf(w, "      %s\n", m.ProblemText(g.locale))
		}
		if m.Fix != "" && m.Reachable {
			fmt.Fprintf(w, "      %s: %s\n", msg(g.locale, "対処", "fix"), m.FixText(g.locale))
		}
	}
}

func newModelsSetupCmd(g *globals) *cobra.Command {
	var output outputFlag
	var force bool
	var from string
	cmd := &cobra.Command{
		Use:   "setup",
		Short: "pull the base models and create the configured local models that are missing",
		Long: "For each configured local model that the Ollama server of ollama.base_url does not have: pull the\n" +
			"base model its Modelfile names (FROM) and create the model from the Modelfile (deploy/ollama,\n" +
			"built into this binary) over Ollama's API; a model the suite ships no Modelfile for is pulled by\n" +
			"name. Models already present are left alone unless --force. A Modelfile num_ctx above\n" +
			"ollama.max_context is lowered to it. Progress is a bar on a terminal, plain lines otherwise.\n" +
			"Exit code 0 when every model is ready, 1 when a pull or create failed, 6 when Ollama cannot be reached.",
		Example: "  picoclaw models setup\n  picoclaw models setup --from qwen2.5:3b   # a smaller base for every model\n  picoclaw models setup --force             # recreate after changing a Modelfile",
		Args:    noArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			return runModelsSetup(cmd.Context(), g, output, force, from)
		},
	}
	cmd.Flags().BoolVar(&force, "force", false, "recreate models that are already present")
	cmd.Flags().StringVar(&from, "from", "", "base model to create from instead of the Modelfile's FROM")
	output.register(cmd)
	return cmd
}

func runModelsSetup(ctx context.Context, g *globals, output outputFlag, force bool, from string) error {
	jsonOut, err := output.isJSON()
	if err != nil {
		return err
	}
	c, err := loadSuite(g)
	if err != nil {
		return err
	}
	base, models := localModels(c)
	rep := modelsReport{BaseURL: base}
	// Progress: a bar on a terminal (standard error); otherwise plain lines, on standard output in
	// text mode and standard error in JSON mode.
	lines := g.io.Out
	if jsonOut {
		lines = g.io.Err
	}
	var failed error
	for _, m := range models {
		api := ollama.NewAPI(m.Config.BaseURL, nil)
		r := modelReport{Agents: m.Agents}
		present, err := api.List(ctx)
		if err != nil {
			if errors.Is(err, llm.ErrUnreachable) {
				rep.Models = append(rep.Models, modelReport{ModelStatus: ollama.ModelStatus{Model: m.Config.Model, Problem: err.Error(), Fix: "ollama serve",
					NumCtx: m.Config.NumCtx, MaxContext: m.Config.MaxContext}, Agents: m.Agents, Action: "failed", Error: err.Error()})
				failed = &apiError{code: ExitUnavailable, reason: "ollama_unreachable", err: errors.New(msg(g.locale,
					"Ollama（"+m.Config.BaseURL+"）に接続できません。Ollama を起動してから（ollama serve）もう一度実行してください",
					"Ollama at "+m.Config.BaseURL+" cannot be reached: start it (ollama serve) and run this again"))}
				break
			}
			return err
		}
		r.Action, r.From, err = setupModel(ctx, g, api, m, ollama.Has(present, m.Config.Model), force, from, lines)
		if err != nil {
			r.Action, r.Error = "failed", err.Error()
			fmt.Fprintf(g.io.Err, "picoclaw models setup: %s: %v\n", m.Config.Model, err)
			if failed == nil {
				failed = &apiError{code: ExitError, reason: "setup_failed", err: errors.New(msg(g.locale, m.Config.Model+" を用意できませんでした", "could not set up "+m.Config.Model))}
			}
		}
		r.ModelStatus = ollama.Check(ctx, api, m.Config.Model, m.Config.NumCtx, m.Config.MaxContext)
		rep.Reachable = rep.Reachable || r.Reachable
		rep.Models = append(rep.Models, r)
	}
	if jsonOut {
		if err := writeJSON(g.io.Out, rep); err != nil {
			return err
		}
	} else {
		printModels(g, rep)
	}
	if failed != nil {
		return failed
	}
	return modelsOutcome(g, rep)
}

// setupModel makes one model present: left alone when it is (unless force), created from the
// suite's Modelfile after pulling its base, or pulled by name when the suite ships none.
func setupModel(ctx context.Context, g *globals, api *ollama.API, m localModel, present, force bool, from string, lines io.Writer) (action, source string, err error) {
	name := m.Config.Model
	if present && !force {
		fmt.Fprintf(lines, "%s: %s\n", name, msg(g.locale, "あります（そのままにします）", "present (left alone)"))
		return "present", "", nil
	}
	text, ok := modelfiles.Modelfile(name)
	if !ok {
		if err := pull(ctx, g, api, name, name, lines); err != nil {
			return "", "", err
		}
		return "pulled", name, nil
	}
	mf, err := ollama.ParseModelfile(text)
	if err != nil {
		return "", "", fmt.Errorf("built-in Modelfile of %s: %w", name, err)
	}
	if max := m.Config.MaxContext; max > 0 && mf.NumCtx() > max {
		fmt.Fprintf(lines, "%s: %s\n", name, fmt.Sprintf(msg(g.locale, "Modelfile の num_ctx %d を max_context %d に下げます", "lowering the Modelfile's num_ctx %d to max_context %d"), mf.NumCtx(), max))
		mf.Parameters["num_ctx"] = int64(max)
	}
	req := mf.CreateRequest(name, from)
	if err := pull(ctx, g, api, name, req.From, lines); err != nil {
		return "", "", err
	}
	fmt.Fprintf(lines, msg(g.locale, "%s: %s から作成します\n", "%s: creating from %s\n"), name, req.From)
	// Creating from a pulled base takes a few status lines and no bytes: no bar.
	err = api.Create(ctx, req, func(p ollama.Progress) { fmt.Fprintf(lines, "%s: %s\n", name, p.Status) })
	if err != nil {
		return "", "", fmt.Errorf("create %s from %s: %w", name, req.From, err)
	}
	if present {
		return "recreated", req.From, nil
	}
	return "created", req.From, nil
}

// pull pulls model (for target), one bar per layer on a terminal, plain lines otherwise (one a
// status, not one a byte count).
func pull(ctx context.Context, g *globals, api *ollama.API, target, model string, lines io.Writer) error {
	fmt.Fprintf(lines, "%s: %s %s\n", target, msg(g.locale, "取得します:", "pulling"), model)
	var bar *progress
	digest, last := "", ""
	shift := 0
	err := api.Pull(ctx, model, func(p ollama.Progress) {
		if p.Digest != "" && p.Total > 0 && isTerminal(g.io.Err) {
			if p.Digest != digest {
				bar.Done()
				digest = p.Digest
				// A model layer counts in MB, the small ones (template, licence, parameters) in KB or bytes.
				unit := "B"
				switch {
				case p.Total >= 1<<20:
					shift, unit = 20, "MB"
				case p.Total >= 1<<10:
					shift, unit = 10, "KB"
				default:
					shift = 0
				}
				bar = newProgress(g.io.Err, model+" "+short(p.Digest), p.Total>>shift, unit)
			}
			if bar != nil {
				bar.Add((p.Completed >> shift) - bar.done)
			}
			return
		}
		if p.Status != last {
			last = p.Status
			if bar != nil {
				bar.Done()
				bar, digest = nil, ""
			}
			status := p.Status
			if p.Total > 0 {
				status += fmt.Sprintf(" (%d MB)", p.Total>>20)
			}
			fmt.Fprintf(lines, "%s: %s\n", target, status)
		}
	})
	bar.Done()
	if err != nil {
		return fmt.Errorf("pull %s: %w", model, err)
	}
	return nil
}

func short(digest string) string {
	d := strings.TrimPrefix(digest, "sha256:")
	if len(d) > 12 {
		d = d[:12]
	}
	return d
}

func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	return enc.Encode(v)
}
