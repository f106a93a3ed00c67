package workspace

import (
	"bufio"
	"regexp"
	"strings"
)

// ignoreRule is one .gitignore pattern, compiled.
type ignoreRule struct {
	re      *regexp.Regexp
	negate  bool
	dirOnly bool
	// name or suffix, when set, match the last path element without the regexp: the common
	// shapes "name" and "*.ext" of an unanchored pattern.
	name, suffix string
}

func (r ignoreRule) match(rel string) bool {
	switch {
	case r.name != "":
		return rel == r.name || strings.HasSuffix(rel, "/"+r.name)
	case r.suffix != "":
		base := rel[strings.LastIndexByte(rel, '/')+1:]
		return len(base) >= len(r.suffix) && strings.HasSuffix(base, r.suffix)
	}
	return r.re.MatchString(rel)
}

// ignoreSet is the .gitignore rules of one directory; base is that directory's workspace path
// ("" for the root), against which anchored patterns are matched.
type ignoreSet struct {
	base  string
	rules []ignoreRule
}

// parseIgnore compiles the lines of a .gitignore file found in dir. It follows gitignore(5):
// blank lines and # comments are skipped, ! negates, a trailing / matches directories only, a
// pattern with a slash elsewhere is anchored to dir, one without matches a name at any depth,
// and ** spans directories.
func parseIgnore(dir, content string) ignoreSet {
	set := ignoreSet{base: dir}
	sc := bufio.NewScanner(strings.NewReader(content))
	for sc.Scan() {
		line := strings.TrimRight(sc.Text(), "\r")
		if !strings.HasSuffix(line, `\ `) {
			line = strings.TrimRight(line, " ")
		}
		if line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		var r ignoreRule
		if strings.HasPrefix(line, "!") {
			r.negate, line = true, line[1:]
		} else if strings.HasPrefix(line, `\!`) || strings.HasPrefix(line, `\#`) {
			line = line[1:]
		}
		if strings.HasSuffix(line, "/") {
			r.dirOnly, line = true, strings.TrimSuffix(line, "/")
		}
		if line == "" {
			continue
		}
		anchored := strings.Contains(line, "/")
		if !anchored && !strings.ContainsAny(line, `*?[\`) {
			r.name = line
		} else if !anchored && strings.HasPrefix(line, "*") && !strings.ContainsAny(line[1:], `*?[\`) {
			r.suffix = line[1:]
		}
		line = strings.TrimPrefix(line, "/")
		expr := globToRegexp(line)
		if !anchored {
			expr = "(?:.*/)?" + expr
		}
		re, err := regexp.Compile("^" + expr + "$")
		if err != nil {
			continue // a pattern git would not understand either is ignored
		}
		r.re = re
		set.rules = append(set.rules, r)
	}
	return set
}

func globToRegexp(g string) string {
	var b strings.Builder
	for i := 0; i < len(g); i++ {
		c := g[i]
		switch {
		case strings.HasPrefix(g[i:], "**/"):
			b.WriteString("(?:.*/)?")
			i += 2
		case strings.HasPrefix(g[i:], "/**") && i+3 == len(g):
			b.WriteString("/.*")
			i += 2
		case strings.HasPrefix(g[i:], "**"):
			b.WriteString(".*")
			i++
		case c == '*':
			b.WriteString("[^/]*")
		case c == '?':
			b.WriteString("[^/]")
		case c == '\\' && i+1 < len(g):
			i++
			b.WriteString(regexp.QuoteMeta(string(g[i])))
		case c == '[':
			end := strings.IndexByte(g[i+1:], ']')
			if end < 0 {
				b.WriteString(`\[`)
				continue
			}
			class := g[i+1 : i+1+end]
			if strings.HasPrefix(class, "!") {
				class = "^" + class[1:]
			}
			b.WriteString("[" + strings.ReplaceAll(class, `\`, `\\`) + "]")
			i += end + 1
		default:
			b.WriteString(regexp.QuoteMeta(string(c)))
		}
	}
	return b.String()
}

// ignorer is the stack of .gitignore sets from the root down to the directory being walked.
type ignorer []ignoreSet

// ignored reports whether the workspace path p (a directory when dir) is ignored: the last
// matching rule of the deepest file decides, as in git.
func (ig ignorer) ignored(p string, dir bool) bool {
	for i := len(ig) - 1; i >= 0; i-- {
		s := ig[i]
		rel := p
		if s.base != "" {
			if !strings.HasPrefix(p, s.base+"/") {
				continue
			}
			rel = p[len(s.base)+1:]
		}
		for j := len(s.rules) - 1; j >= 0; j-- {
			r := s.rules[j]
			if r.dirOnly && !dir {
				continue
			}
			if r.match(rel) {
				return !r.negate
			}
		}
	}
	return false
}
