// Command testsum is `make test`'s reporter: `go test -json … | testsum [-no-skips]`. It exits 1
// when a test or package failed, and with -no-skips (CI) also when a test was skipped.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/picoclaw-suite/picoclaw/tools/testsum"
)

func main() {
	noSkips := flag.Bool("no-skips", false, "fail when any test was skipped")
	flag.Parse()
	s, err := testsum.Run(os.Stdin, os.Stdout)
	if err != nil {
		fmt.Fprintln(os.Stderr, "testsum:", err)
		os.Exit(2)
	}
	for _, sk := range s.Skips {
		fmt.Printf("skipped %s: %s\n", sk.Test, sk.Reason)
	}
	fmt.Println(s.Line())
	if !s.OK(*noSkips) {
		if *noSkips && s.Skipped > 0 {
			fmt.Println("make test: skipped tests are failures here (CI)")
		}
		os.Exit(1)
	}
}
