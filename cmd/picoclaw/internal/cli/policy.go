package cli

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"sort"
	"strings"

	"github.com/spf13/cobra"

	"github.com/picoclaw-suite/picoclaw/pkg/fault"
	approval "github.com/picoclaw-suite/picoclaw/services/approval/service"
)

// newPolicyCmd is `picoclaw policy test`: what the approval policy would decide for a patch,
// which rule decided and the facts it saw, without creating a job. Offline (the default) it uses
// the shipped default policy or --policy FILE; with --remote it asks the running approval
// service, whose answer also reflects its policy file and the Auto-Approve grant in force.
func newPolicyCmd(g *globals) *cobra.Command {
	cmd := &cobra.Command{
		Use: "policy", Short: "show what the approval policy decides for a patch, the deciding rule and the facts (no job is created)",
		Args: groupArgs, RunE: groupRun,
	}
	var o policyOptions
	test := &cobra.Command{
		Use:   "test <patch-file> [--route R] [--task T] [--as USER] [--cost USD] [--tokens N] [--policy FILE | --remote]",
		Short: "evaluate the policy for a patch file", Args: exactArgs(1, txtArgsPatchFile), Annotations: stateAnnotations(),
		RunE: func(cmd *cobra.Command, args []string) error { return runPolicyTest(cmd.Context(), g, args[0], o) },
	}
	f := test.Flags()
	f.StringVar(&o.route, "route", "", "the route (CODE1, CODE3, ...)")
	f.StringVar(&o.task, "task", "", "the task type (docs, codegen, ...)")
	f.StringVar(&o.as, "as", "", "the requester's id")
	f.Float64Var(&o.cost, "cost", 0, "the estimated cost in USD")
	f.Int64Var(&o.tokens, "tokens", 0, "the estimated tokens")
	f.StringVar(&o.policyFile, "policy", "", "offline: evaluate this policy file instead of the shipped default")
	f.BoolVar(&o.remote, "remote", false, "ask the running approval service (REST, PICOCLAW_TOKEN)")
	o.output.register(test)
	_ = test.MarkFlagFilename("policy", "yaml", "yml")
	_ = test.RegisterFlagCompletionFunc("task", fixedCompletions("design", "codegen", "review", "refactor", "ops", "docs"))
	cmd.AddCommand(test)
	return cmd
}

type policyOptions struct {
	route, task, as, policyFile string
	cost                        float64
	tokens                      int64
	remote                      bool
	output                      outputFlag
}

func runPolicyTest(ctx context.Context, g *globals, patchFile string, o policyOptions) error {
	jsonOut, err := o.output.isJSON()
	if err != nil {
		return err
	}
	if o.remote && o.policyFile != "" {
		return usage(txtPolicyRemote)
	}
	data, err := os.ReadFile(patchFile)
	if err != nil {
		return &usageError{texts.Wrap(nil, err, txtPatchFile, patchFile, trouble(err))}
	}
	req := approval.PolicySimulationRequest{Patch: string(data), Route: o.route, TaskType: o.task, Requester: o.as,
		EstimatedCostUSD: o.cost, EstimatedTokens: o.tokens, Locale: g.locale}
	var sim approval.PolicySimulation
	if o.remote {
		if err := rest(ctx, g, http.MethodPost, "/v1/policy/simulate", nil, req, &sim); err != nil {
			return err
		}
	} else {
		cfg := approval.DefaultConfig()
		cfg.Approval.PolicyFile = o.policyFile
		if sim, err = approval.SimulatePolicy(cfg, req); err != nil {
			if _, ok := fault.Text(err, ""); ok {
				return &usageError{err} // the patch, said in the user's language
			}
			return &usageError{texts.Wrap(nil, err, txtPolicyFailed, err.Error())}
		}
	}
	if jsonOut {
		enc := json.NewEncoder(g.io.Out)
		enc.SetIndent("", "  ")
		enc.SetEscapeHTML(false)
		return enc.Encode(sim)
	}
	printSimulation(g, sim)
	return nil
}

func printSimulation(g *globals, sim approval.PolicySimulation) {
	w := g.io.Out
	fmt.Fprintf(w, "%s: %s\n", msg(g.locale, "判定", "decision"), fault.StateText(g.locale, string(sim.Outcome)))
	fmt.Fprintf(w, "%s: %s\n", msg(g.locale, "決めたルール", "rule"), sim.Rule)
	fmt.Fprintf(w, "%s: %s\n", msg(g.locale, "理由", "reason"), cmp.Or(sim.ReasonText, sim.Reason))
	for _, h := range sim.Hits {
		where := "patch"
		if h.Op >= 0 {
			where = fmt.Sprintf("op %d", h.Op+1)
		}
		fmt.Fprintf(w, "  - %s [%s] %s\n", h.Rule, where, cmp.Or(h.Text, h.Detail))
	}
	if sim.GrantID != "" {
		fmt.Fprintf(w, "%s: %s\n", msg(g.locale, "許可（Auto-Approve）", "grant"), sim.GrantID)
	}
	fmt.Fprintf(w, "%s: %s\n", msg(g.locale, "ポリシー", "policy"), sim.PolicyHash)
	if len(sim.Facts) == 0 {
		return
	}
	fmt.Fprintln(w, msg(g.locale, "事実:", "facts:"))
	keys := make([]string, 0, len(sim.Facts))
	for k := range sim.Facts {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		var b strings.Builder
		enc := json.NewEncoder(&b)
		enc.SetEscapeHTML(false)
		_ = enc.Encode(sim.Facts[k])
		fmt.Fprintf(w, "  %s = %s\n", k, strings.TrimSpace(b.String()))
	}
}
