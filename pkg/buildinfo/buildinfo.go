// Package buildinfo is the version and commit a binary was built from: stamped by the release
// build (-ldflags "-X …/buildinfo.version=… -X …/buildinfo.commit=…"), otherwise read from the
// module and VCS information the Go toolchain embeds.
package buildinfo

import (
	"runtime"
	"runtime/debug"
	"sync"
)

// Set by the release build.
var (
	version string
	commit  string
)

// Info is what a binary says about itself.
type Info struct {
	Version string `json:"version"`
	Commit  string `json:"commit,omitempty"`
	// Modified is true when the build's working tree had uncommitted changes.
	Modified bool   `json:"modified,omitempty"`
	Go       string `json:"go"`
}

var (
	once sync.Once
	info Info
)

// Get returns the binary's build information.
func Get() Info {
	once.Do(func() { info = read(version, commit) })
	return info
}

func read(v, c string) Info {
	out := Info{Version: v, Commit: c, Go: runtime.Version()}
	if bi, ok := debug.ReadBuildInfo(); ok {
		if out.Version == "" && bi.Main.Version != "" && bi.Main.Version != "(devel)" {
			out.Version = bi.Main.Version
		}
		for _, s := range bi.Settings {
			switch s.Key {
			case "vcs.revision":
				if out.Commit == "" {
					out.Commit = s.Value
				}
			case "vcs.modified":
				out.Modified = s.Value == "true" && c == ""
			}
		}
	}
	if out.Version == "" {
		out.Version = "dev"
	}
	if len(out.Commit) > 12 {
		out.Commit = out.Commit[:12]
	}
	return out
}

// String is "<version> (<commit>[, modified], <go version>)".
func (i Info) String() string {
	s := i.Version + " ("
	if i.Commit != "" {
		s += i.Commit
		if i.Modified {
			s += ", modified"
		}
		s += ", "
	}
	return s + i.Go + ")"
}
