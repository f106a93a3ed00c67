package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"

	"github.com/picoclaw-suite/picoclaw/pkg/svcauth"
)

// runKeys prints a new key set: one public line every service gets, and one private key per
// identity that only that service (or, for cli, the operator's terminal) may hold.
func newKeysCmd(g *globals) *cobra.Command {
	return &cobra.Command{
		Use: "keys", Short: "make a fresh set of service keys (env lines for compose or Kubernetes secrets)",
		Args: noArgs, Annotations: map[string]string{annotNoConfig: "yes"},
		RunE: func(*cobra.Command, []string) error { return runKeys(g) },
	}
}

func runKeys(g *globals) error {
	keys, err := svcauth.GenerateSuite()
	if err != nil {
		return err
	}
	w := g.io.Out
	fmt.Fprintln(w, "# Every service and the picoclaw CLI: the public keys of the suite.")
	fmt.Fprintf(w, "PICOCLAW_AUTH_PUBLIC_KEYS=%s\n", strings.Join(svcauth.PublicEntries(keys), ","))
	fmt.Fprintln(w, "# Each service gets only its own key, as PICOCLAW_SERVICE_KEY (docker-compose.yaml maps these names).")
	for _, id := range svcauth.Identities() {
		fmt.Fprintf(w, "PICOCLAW_SERVICE_KEY_%s=%s\n", strings.ToUpper(strings.ReplaceAll(id, "-", "_")), keys[id].Private)
	}
	return nil
}
