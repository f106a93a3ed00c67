// Package ollama holds the Modelfiles of the suite's local models (chat-v1 for Mio, worker-v1
// for Shiro), built into the picoclaw binary so `picoclaw models setup` works after go install.
package ollama

import (
	"embed"
	"sort"
	"strings"
)

//go:embed *.Modelfile
var files embed.FS

// Modelfile is the shipped Modelfile of model ("chat-v1:latest" and "chat-v1" both name
// chat-v1.Modelfile); ok is false for a model the suite does not ship.
func Modelfile(model string) (text string, ok bool) {
	name, tag, _ := strings.Cut(model, ":")
	if tag != "" && tag != "latest" {
		return "", false
	}
	b, err := files.ReadFile(name + ".Modelfile")
	if err != nil {
		return "", false
	}
	return string(b), true
}

// Models are the models the suite ships Modelfiles for, as "<name>:latest".
func Models() []string {
	entries, _ := files.ReadDir(".")
	var out []string
	for _, e := range entries {
		if name, ok := strings.CutSuffix(e.Name(), ".Modelfile"); ok {
			out = append(out, name+":latest")
		}
	}
	sort.Strings(out)
	return out
}
