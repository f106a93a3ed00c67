package cli

import (
	"context"
	"fmt"
	"strings"

	"github.com/picoclaw-suite/picoclaw/pkg/svcauth"
)

// runKeys prints a new key set: one public line every service gets, and one private key per
// identity that only that service (or, for cli, the operator's terminal) may hold.
func runKeys(_ context.Context, g *globals, args []string) error {
	fs := newFlags(g, "keys", commands()["keys"].usage)
	pos, err := parseInterspersed(fs, args)
	if err != nil {
		return err
	}
	if len(pos) > 0 {
		return usagef("unexpected argument %q", pos[0])
	}
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
