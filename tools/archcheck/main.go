// Command archcheck enforces the import rules of ARCHITECTURE.md and keeps the module graph
// from drifting: it lists every package of the workspace's modules with `go list -deps -json`
// and checks each against the rule table (rules.go), and it fails when two go.mod files of the
// workspace require different versions of one module. `make lint` runs it from the repository
// root.
package main

import (
	"flag"
	"fmt"
	"os"
)

func main() {
	root := flag.String("root", ".", "directory holding go.work")
	flag.Parse()
	problems, err := Check(*root)
	if err != nil {
		fmt.Fprintln(os.Stderr, "archcheck:", err)
		os.Exit(2)
	}
	for _, p := range problems {
		fmt.Println(p)
	}
	if len(problems) > 0 {
		fmt.Printf("archcheck: %d problem(s); the rules are in ARCHITECTURE.md\n", len(problems))
		os.Exit(1)
	}
	fmt.Println("archcheck: import rules and module versions ok")
}
