// Command archcheck runs the checks of tools/archcheck on the workspace (`make lint` runs it
// from the repository root) and exits 1 when it finds a problem.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/picoclaw-suite/picoclaw/tools/archcheck"
)

func main() {
	root := flag.String("root", ".", "directory holding go.work")
	flag.Parse()
	problems, err := archcheck.Check(*root)
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
