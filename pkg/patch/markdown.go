package patch

import (
	"fmt"
	"strings"
)

// fenceOpen recognises an opening code fence (``` or ~~~, at least three, up to three spaces
// of indentation) and returns the fence marker and the info string.
func fenceOpen(line string) (marker, info string, ok bool) {
	line = strings.TrimSuffix(line, "\r")
	indent := len(line) - len(strings.TrimLeft(line, " "))
	if indent > 3 {
		return "", "", false
	}
	l := line[indent:]
	if len(l) < 3 || (l[0] != '`' && l[0] != '~') {
		return "", "", false
	}
	c := l[0]
	n := 0
	for n < len(l) && l[n] == c {
		n++
	}
	if n < 3 {
		return "", "", false
	}
	info = strings.TrimSpace(l[n:])
	if c == '`' && strings.ContainsRune(info, '`') {
		return "", "", false
	}
	return l[:n], info, true
}

func fenceClose(line, marker string) bool {
	line = strings.TrimSuffix(line, "\r")
	t := strings.TrimLeft(line, " ")
	if len(line)-len(t) > 3 {
		return false
	}
	n := 0
	for n < len(t) && t[n] == marker[0] {
		n++
	}
	return n >= len(marker) && strings.TrimSpace(t[n:]) == ""
}

var shellLangs = map[string]bool{"bash": true, "sh": true, "shell": true, "zsh": true, "console": true}

// parseMarkdown reads fenced blocks in author order: ```lang:path is a file update, ```bash
// and ```sh a shell command, ```git git operations (one per line), ```diff a unified diff and
// ```json a JSON command array. Prose outside fences is ignored; fences that fit none of these
// are reported in unknown.
func parseMarkdown(text string) (ops []raw, unknown []string, err error) {
	lines := strings.Split(text, "\n")
	fence := 0
	for i := 0; i < len(lines); i++ {
		marker, info, ok := fenceOpen(lines[i])
		if !ok {
			continue
		}
		fence++
		start := i
		src := fmt.Sprintf("fence %d (line %d)", fence, start+1)
		var body []string
		closed := false
		for i++; i < len(lines); i++ {
			if fenceClose(lines[i], marker) {
				closed = true
				break
			}
			body = append(body, strings.TrimSuffix(lines[i], "\r"))
		}
		if !closed {
			return nil, nil, errorf(src, "", "code fence is not closed")
		}
		content := strings.Join(body, "\n")
		if len(body) > 0 {
			content += "\n"
		}
		lang, path, hasPath := strings.Cut(info, ":")
		lang = strings.ToLower(strings.TrimSpace(lang))
		path = strings.TrimSpace(path)
		switch {
		case hasPath:
			ops = append(ops, raw{Type: string(TypeFileEdit), Action: ActionUpdate, Target: path, Content: content, Source: src})
		case shellLangs[lang]:
			ops = append(ops, raw{Type: string(TypeShell), Action: ActionRun, Target: strings.TrimRight(content, "\n"), Source: src})
		case lang == "git":
			g, err := parseGitLines(body, src, start+2)
			if err != nil {
				return nil, nil, err
			}
			ops = append(ops, g...)
		case lang == "diff" || lang == "patch" || lang == "udiff":
			d, err := parseDiff(content, src)
			if err != nil {
				return nil, nil, err
			}
			ops = append(ops, d.ops...)
			unknown = append(unknown, d.unknown...)
		case lang == "json" && strings.HasPrefix(strings.TrimSpace(content), "["):
			j, err := parseJSON(strings.TrimSpace(content), src)
			if err != nil {
				return nil, nil, err
			}
			ops = append(ops, j...)
		default:
			label := info
			if label == "" {
				label = "(no language)"
			}
			unknown = append(unknown, fmt.Sprintf("%s: %s block without a target path is not applied", src, quote(label)))
		}
	}
	return ops, unknown, nil
}

// parseGitLines turns each "git <sub> ..." line of a ```git fence into one operation per
// target.
func parseGitLines(body []string, fenceSrc string, firstLine int) ([]raw, error) {
	var ops []raw
	for n, line := range body {
		t := strings.TrimSpace(line)
		if t == "" || strings.HasPrefix(t, "#") {
			continue
		}
		src := fmt.Sprintf("%s git line %d", fenceSrc, firstLine+n)
		words, err := splitWords(strings.TrimPrefix(t, "$ "))
		if err != nil {
			return nil, errorf(src, "", "%v", err)
		}
		if len(words) < 2 || words[0] != "git" {
			return nil, errorf(src, "", "expected 'git <subcommand> ...', got %s", quote(t))
		}
		sub, args := words[1], words[2:]
		md := map[string]string{}
		var targets []string
		content := ""
		for k := 0; k < len(args); k++ {
			a := args[k]
			switch {
			case a == "--":
			case sub == ActionGitCommit && (a == "-m" || a == "--message"):
				if k+1 >= len(args) {
					return nil, errorf(src, "content", "-m needs a message")
				}
				if content != "" {
					content += "\n\n"
				}
				content += args[k+1]
				k++
			case sub == ActionGitPush && (a == "-f" || a == "--force"):
				md[MetaForce] = ForceOverwrite
			case sub == ActionGitPush && a == "--force-with-lease":
				md[MetaForce] = ForceWithLease
			case sub == ActionGitPush && (a == "-u" || a == "--set-upstream"):
				md[MetaSetUpstream] = "true"
			case sub == ActionGitReset && (a == "--hard" || a == "--soft" || a == "--mixed"):
				md[MetaMode] = strings.TrimPrefix(a, "--")
			case sub == ActionGitCheckout && a == "-b":
				md[MetaNewBranch] = "true"
			case sub == ActionGitCheckout && (a == "-f" || a == "--force"):
				md[MetaForce] = "true"
			case sub == ActionGitAdd && (a == "-A" || a == "--all"):
				targets = append(targets, ".")
			case strings.HasPrefix(a, "-"):
				return nil, errorf(src, "", "unsupported option %s for git %s", quote(a), sub)
			default:
				targets = append(targets, a)
			}
		}
		switch sub {
		case ActionGitAdd, ActionGitReset, ActionGitCheckout:
			if len(targets) == 0 {
				targets = []string{""}
			}
			for _, tg := range targets {
				ops = append(ops, raw{Type: string(TypeGit), Action: sub, Target: tg, Metadata: copyMap(md), Source: src})
			}
		case ActionGitCommit:
			if len(targets) > 0 {
				return nil, errorf(src, "", "git commit takes only -m <message>")
			}
			ops = append(ops, raw{Type: string(TypeGit), Action: sub, Content: content, Metadata: copyMap(md), Source: src})
		case ActionGitPush:
			if len(targets) > 2 {
				return nil, errorf(src, "", "git push takes at most <remote> <branch>")
			}
			r := raw{Type: string(TypeGit), Action: sub, Metadata: md, Source: src}
			if len(targets) > 0 {
				r.Target = targets[0]
			}
			if len(targets) > 1 {
				md[MetaBranch] = targets[1]
			}
			ops = append(ops, r)
		default:
			return nil, errorf(src, "action", "unknown git subcommand %s (want add, commit, reset, checkout or push)", quote(sub))
		}
	}
	return ops, nil
}

func copyMap(m map[string]string) map[string]string {
	if len(m) == 0 {
		return nil
	}
	out := make(map[string]string, len(m))
	for k, v := range m {
		out[k] = v
	}
	return out
}

// splitWords splits a command line like a POSIX shell would for plain words and single or
// double quotes (no expansion).
func splitWords(s string) ([]string, error) {
	var (
		words  []string
		cur    strings.Builder
		inWord bool
		quote  rune
	)
	for _, r := range s {
		switch {
		case quote != 0:
			if r == quote {
				quote = 0
			} else {
				cur.WriteRune(r)
			}
		case r == '\'' || r == '"':
			quote, inWord = r, true
		case r == ' ' || r == '\t':
			if inWord {
				words = append(words, cur.String())
				cur.Reset()
				inWord = false
			}
		case strings.ContainsRune("|&;<>$`\\", r):
			return nil, fmt.Errorf("shell syntax %q is not allowed in a git line", r)
		default:
			cur.WriteRune(r)
			inWord = true
		}
	}
	if quote != 0 {
		return nil, fmt.Errorf("unterminated quote")
	}
	if inWord {
		words = append(words, cur.String())
	}
	return words, nil
}
