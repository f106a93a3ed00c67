// Package config holds the suite's default files, built into every binary that needs them:
// the chat persona, the routing rules and the example configuration (Example). A file at the configured path on disk always wins;
// the built-in copy answers only for a default path ("config/…") that does not exist there, so
// the suite runs from any directory and after `go install`.
package config

import (
	"embed"
	"errors"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"strings"
)

//go:embed persona/mio.md rules.yaml
var files embed.FS

//go:embed picoclaw.example.yaml
var example []byte

// Example is picoclaw.example.yaml: every key of the suite's configuration with its default and
// what it does (`picoclaw config example`).
func Example() []byte { return example }

// ReadFile reads path from disk, or, when it does not exist there and names a default file
// ("config/persona/mio.md", "config/rules.yaml"), returns the built-in copy. builtin says which.
func ReadFile(p string) (data []byte, builtin bool, err error) {
	data, err = os.ReadFile(p)
	if err == nil || !errors.Is(err, fs.ErrNotExist) || filepath.IsAbs(p) {
		return data, false, err
	}
	name, ok := strings.CutPrefix(path.Clean(filepath.ToSlash(p)), "config/")
	if !ok {
		return nil, false, err
	}
	b, ferr := files.ReadFile(name)
	if ferr != nil {
		return nil, false, err
	}
	return b, true, nil
}
