package cli

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"os"
	"sort"
	"strings"

	approval "github.com/picoclaw-suite/picoclaw/services/approval/service"
)

// runPolicy is `picoclaw policy test`: what the approval policy would decide for a patch, which
// rule decided and the facts it saw, without creating a job. Offline (the default) it uses the
// shipped default policy or --policy FILE; with --remote it asks the running approval service,
// whose answer also reflects its policy file and the Auto-Approve grant in force.
func runPolicy(ctx context.Context, g *globals, args []string) error {
	use := commands()["policy"].usage
	if len(args) == 0 || args[0] != "test" {
		if len(args) > 0 && (args[0] == "--help" || args[0] == "-h") {
			fmt.Fprintf(g.io.Out, "usage: picoclaw %s\n", use)
			return nil
		}
		return usagef("expected the subcommand test")
	}
	flags := newFlags(g, "policy test", use)
	route := flags.String("route", "", "the route (CODE1, CODE3, ...)")
	task := flags.String("task", "", "the task type (docs, codegen, ...)")
	as := flags.String("as", "", "the requester's id")
	cost := flags.Float64("cost", 0, "the estimated cost in USD")
	tokens := flags.Int64("tokens", 0, "the estimated tokens")
	policyFile := flags.String("policy", "", "offline: evaluate this policy file instead of the shipped default")
	remote := flags.Bool("remote", false, "ask the running approval service (REST, PICOCLAW_TOKEN)")
	jsonOut := flags.Bool("json", false, "print the answer as JSON")
	pos, err := parseInterspersed(flags, args[1:])
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("expected one patch file")
	}
	if *remote && *policyFile != "" {
		return usagef("--policy is for offline tests; the service uses its own approval.policy_file")
	}
	data, err := os.ReadFile(pos[0])
	if err != nil {
		return usagef("patch file: %v", err)
	}
	req := approval.PolicySimulationRequest{Patch: string(data), Route: *route, TaskType: *task, Requester: *as,
		EstimatedCostUSD: *cost, EstimatedTokens: *tokens}
	var sim approval.PolicySimulation
	if *remote {
		if err := rest(ctx, g, http.MethodPost, "/v1/policy/simulate", nil, req, &sim); err != nil {
			return err
		}
	} else {
		cfg := approval.DefaultConfig()
		cfg.Approval.PolicyFile = *policyFile
		if sim, err = approval.SimulatePolicy(cfg, req); err != nil {
			return usagef("%v", err)
		}
	}
	if *jsonOut {
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
	fmt.Fprintf(w, "%s: %s\n", msg(g.locale, "判定", "decision"), sim.Outcome)
	fmt.Fprintf(w, "%s: %s\n", msg(g.locale, "決めたルール", "rule"), sim.Rule)
	fmt.Fprintf(w, "%s: %s\n", msg(g.locale, "理由", "reason"), sim.Reason)
	for _, h := range sim.Hits {
		where := "patch"
		if h.Op >= 0 {
			where = fmt.Sprintf("op %d", h.Op+1)
		}
		fmt.Fprintf(w, "  - %s [%s] %s\n", h.Rule, where, h.Detail)
	}
	if sim.GrantID != "" {
		fmt.Fprintf(w, "grant: %s\n", sim.GrantID)
	}
	fmt.Fprintf(w, "policy: %s\n", sim.PolicyHash)
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
