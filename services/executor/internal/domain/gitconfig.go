package domain

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// GitConfig is one configuration entry passed to git on its command-line scope (through
// GIT_CONFIG_COUNT / GIT_CONFIG_KEY_n / GIT_CONFIG_VALUE_n, so no key or value is ever parsed
// out of a "name=value" string). Command-line entries win over every file.
type GitConfig struct {
	Key, Value string
}

// gitFixedConfig switches off everything in git that runs a program named by configuration,
// or that talks to a user: hooks, the file system monitor, external diff, ssh and proxy
// commands, credential helpers, pagers and editors, signing, the ext:: transport, and
// background maintenance. A repository (planted by an earlier job or cloned) cannot turn any of
// them back on, because these entries override its files.
var gitFixedConfig = []GitConfig{
	{"core.hooksPath", "/dev/null"},
	{"core.fsmonitor", "false"},
	{"core.sshCommand", "ssh -o BatchMode=yes"},
	{"core.askPass", ""},
	{"core.editor", "false"},
	{"core.pager", "cat"},
	{"sequence.editor", "false"},
	{"diff.external", ""},
	{"credential.helper", ""},
	{"protocol.ext.allow", "never"},
	{"commit.gpgSign", "false"},
	{"tag.gpgSign", "false"},
	{"submodule.recurse", "false"},
	{"gc.auto", "0"},
	{"maintenance.auto", "false"},
}

// GitEnv is the environment of every git invocation besides PATH and the identity: no system
// or global configuration and attributes, no prompt, and the fixed configuration above plus
// extra (driver neutralisations from GitConfigGuard).
func GitEnv(extra []GitConfig) []string {
	env := []string{
		"GIT_CONFIG_NOSYSTEM=1",
		"GIT_CONFIG_GLOBAL=/dev/null",
		"GIT_ATTR_NOSYSTEM=1",
		"GIT_TERMINAL_PROMPT=0",
		"GIT_OPTIONAL_LOCKS=0",
	}
	all := append(append([]GitConfig(nil), gitFixedConfig...), extra...)
	env = append(env, fmt.Sprintf("GIT_CONFIG_COUNT=%d", len(all)))
	for i, c := range all {
		env = append(env, fmt.Sprintf("GIT_CONFIG_KEY_%d=%s", i, c.Key), fmt.Sprintf("GIT_CONFIG_VALUE_%d=%s", i, c.Value))
	}
	return env
}

// GitConfigGuard reads the repository's configuration as `git config -z --list` prints it
// (includes resolved) and decides whether git may run in it. Drivers that a .gitattributes
// file can select by name (filter, diff textconv/command) are neutralised by name; what cannot
// be neutralised that way (includes, whose content could change between this check and the
// run, merge drivers, remote-side program overrides, URL-scoped credential helpers, ...) is
// refused with ErrPermission.
func GitConfigGuard(list string) ([]GitConfig, error) {
	drivers := map[string]bool{}
	textconv := map[string]bool{}
	for _, entry := range strings.Split(list, "\x00") {
		key, _, _ := strings.Cut(entry, "\n")
		if key == "" {
			continue
		}
		section, sub, name := splitKey(key)
		refuse := func() error {
			return Fail(ErrPermission, CodeGitConfigUnsafe, strconv.Quote(key))
		}
		switch {
		case section == "include" || section == "includeif":
			return nil, refuse()
		case section == "filter" && sub != "":
			if !safeDriverName(sub) {
				return nil, refuse()
			}
			drivers[sub] = true
		case section == "diff" && sub != "" && (name == "textconv" || name == "command"):
			if !safeDriverName(sub) {
				return nil, refuse()
			}
			textconv[sub] = true
		case section == "merge" && sub != "" && name == "driver":
			return nil, refuse()
		case section == "remote" && (name == "uploadpack" || name == "receivepack"):
			return nil, refuse()
		case section == "credential" && sub != "":
			return nil, refuse()
		case section == "core" && sub == "" && (name == "gitproxy" || name == "alternaterefscommand" || name == "worktree"):
			return nil, refuse()
		case section == "trailer" && (name == "command" || name == "cmd"):
			return nil, refuse()
		case section == "uploadpack" && name == "packobjectshook":
			return nil, refuse()
		}
	}
	var out []GitConfig
	for _, d := range sortedKeys(drivers) {
		out = append(out,
			GitConfig{"filter." + d + ".clean", ""},
			GitConfig{"filter." + d + ".smudge", ""},
			GitConfig{"filter." + d + ".process", ""},
			GitConfig{"filter." + d + ".required", "false"})
	}
	for _, d := range sortedKeys(textconv) {
		out = append(out, GitConfig{"diff." + d + ".textconv", ""}, GitConfig{"diff." + d + ".command", ""})
	}
	return out, nil
}

// splitKey splits section.subsection.name; section and name are case-insensitive (git prints
// them lower-case), the subsection keeps its case and may contain dots.
func splitKey(key string) (section, sub, name string) {
	first := strings.IndexByte(key, '.')
	last := strings.LastIndexByte(key, '.')
	if first < 0 {
		return strings.ToLower(key), "", ""
	}
	section = strings.ToLower(key[:first])
	name = strings.ToLower(key[last+1:])
	if last > first {
		sub = key[first+1 : last]
	}
	return section, sub, name
}

// safeDriverName accepts driver names that round-trip through a configuration key unchanged.
func safeDriverName(s string) bool {
	if s == "" || len(s) > 100 {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '-' || r == '_' || r == '.') {
			return false
		}
	}
	return true
}

func sortedKeys(m map[string]bool) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
