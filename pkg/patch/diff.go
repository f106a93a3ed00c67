package patch

import (
	"fmt"
	"strconv"
	"strings"
)

type diffResult struct {
	ops     []raw
	unknown []string
	stats   DiffStats
}

type hunk struct {
	header string
	lines  []string
}

type fileDiff struct {
	source           string
	oldPath, newPath string // "" means /dev/null
	gitOld, gitNew   string // from "diff --git a/x b/y"
	renameFrom       string
	renameTo         string
	newFile, deleted bool
	modeOnly         bool
	hunks            []hunk
	adds, dels       int
}

// parseDiff parses a unified or git diff into operations: a new file becomes create (with the
// reconstructed content), a removed file delete, a rename rename (plus a patch when it also
// changes lines), anything else patch with a normalised per-file diff as content.
func parseDiff(text, prefix string) (diffResult, error) {
	lines := strings.Split(text, "\n")
	if len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	var (
		res   diffResult
		files []*fileDiff
		cur   *fileDiff
	)
	src := func(n int, line int) string {
		s := fmt.Sprintf("diff file %d (line %d)", n, line+1)
		if prefix != "" {
			s = prefix + " " + s
		}
		return s
	}
	i := 0
	for i < len(lines) {
		line := strings.TrimSuffix(lines[i], "\r")
		switch {
		case strings.HasPrefix(line, "diff --git "):
			cur = &fileDiff{source: src(len(files)+1, i)}
			files = append(files, cur)
			cur.gitOld, cur.gitNew = splitGitHeader(strings.TrimPrefix(line, "diff --git "))
			i++
			for i < len(lines) {
				h := strings.TrimSuffix(lines[i], "\r")
				if strings.HasPrefix(h, "--- ") || strings.HasPrefix(h, "diff --git ") || strings.HasPrefix(h, "@@") {
					break
				}
				switch {
				case strings.HasPrefix(h, "new file mode"):
					cur.newFile = true
				case strings.HasPrefix(h, "deleted file mode"):
					cur.deleted = true
				case strings.HasPrefix(h, "rename from "):
					cur.renameFrom = unquotePath(strings.TrimPrefix(h, "rename from "))
				case strings.HasPrefix(h, "rename to "):
					cur.renameTo = unquotePath(strings.TrimPrefix(h, "rename to "))
				case strings.HasPrefix(h, "old mode"), strings.HasPrefix(h, "new mode"):
					cur.modeOnly = true
				case strings.HasPrefix(h, "index "), strings.HasPrefix(h, "similarity index"),
					strings.HasPrefix(h, "dissimilarity index"):
				case strings.HasPrefix(h, "Binary files"), strings.HasPrefix(h, "GIT binary patch"):
					return res, errorf(cur.source, "", "binary diffs are not supported")
				case strings.HasPrefix(h, "copy from"), strings.HasPrefix(h, "copy to"):
					return res, errorf(cur.source, "", "copy diffs are not supported; write the new file instead")
				default:
					return res, errorf(src(len(files), i), "", "unexpected line in git header: %s", quote(h))
				}
				i++
			}
			if i < len(lines) && strings.HasPrefix(lines[i], "--- ") {
				var err error
				if i, err = parseFileHeaders(lines, i, cur); err != nil {
					return res, err
				}
			}
			var err error
			if i, err = parseHunks(lines, i, cur); err != nil {
				return res, err
			}
		case strings.HasPrefix(line, "--- ") && i+1 < len(lines) && strings.HasPrefix(lines[i+1], "+++ "):
			cur = &fileDiff{source: src(len(files)+1, i)}
			files = append(files, cur)
			var err error
			if i, err = parseFileHeaders(lines, i, cur); err != nil {
				return res, err
			}
			if i, err = parseHunks(lines, i, cur); err != nil {
				return res, err
			}
		case strings.HasPrefix(line, "@@"):
			return res, errorf(src(len(files)+1, i), "", "hunk without file headers")
		default:
			if strings.TrimSpace(line) != "" && len(files) > 0 {
				res.unknown = append(res.unknown, fmt.Sprintf("%s: text between file diffs ignored: %s", src(len(files), i), quote(line)))
			}
			i++
		}
	}
	if len(files) == 0 {
		return res, errorf(strings.TrimSpace(prefix+" diff"), "", "no file diffs found")
	}
	for _, f := range files {
		ops, err := f.operations()
		if err != nil {
			return res, err
		}
		if len(ops) == 0 {
			res.unknown = append(res.unknown, f.source+": mode-only change is not applied")
		}
		res.ops = append(res.ops, ops...)
		res.stats.Files++
		res.stats.Additions += f.adds
		res.stats.Deletions += f.dels
	}
	return res, nil
}

func parseFileHeaders(lines []string, i int, f *fileDiff) (int, error) {
	if i+1 >= len(lines) || !strings.HasPrefix(lines[i+1], "+++ ") {
		return i, errorf(f.source, "", "'---' header without '+++' header")
	}
	f.oldPath = headerPath(lines[i][4:], "a/")
	f.newPath = headerPath(lines[i+1][4:], "b/")
	return i + 2, nil
}

func parseHunks(lines []string, i int, f *fileDiff) (int, error) {
	for i < len(lines) && strings.HasPrefix(lines[i], "@@") {
		header := strings.TrimSuffix(lines[i], "\r")
		oldN, newN, err := hunkCounts(header)
		if err != nil {
			return i, errorf(f.source, "", "hunk %d: %v", len(f.hunks)+1, err)
		}
		h := hunk{header: header}
		i++
		gotOld, gotNew := 0, 0
		for i < len(lines) && (gotOld < oldN || gotNew < newN) {
			l := lines[i]
			switch {
			case l == "" || l == "\r" || l[0] == ' ':
				if l == "" || l == "\r" {
					l = " " + l
				}
				gotOld++
				gotNew++
			case l[0] == '-':
				gotOld++
				f.dels++
			case l[0] == '+':
				gotNew++
				f.adds++
			case l[0] == '\\':
			default:
				return i, errorf(f.source, "", "hunk %d: unexpected line %s", len(f.hunks)+1, quote(l))
			}
			h.lines = append(h.lines, l)
			i++
		}
		if gotOld != oldN || gotNew != newN {
			return i, errorf(f.source, "", "hunk %d: header says -%d +%d lines, body has -%d +%d",
				len(f.hunks)+1, oldN, newN, gotOld, gotNew)
		}
		// "\ No newline at end of file" follows the last line it refers to.
		for i < len(lines) && strings.HasPrefix(lines[i], "\\") {
			h.lines = append(h.lines, lines[i])
			i++
		}
		f.hunks = append(f.hunks, h)
	}
	return i, nil
}

// hunkCounts reads "@@ -a[,b] +c[,d] @@".
func hunkCounts(header string) (oldN, newN int, err error) {
	rest, ok := strings.CutPrefix(header, "@@ ")
	if !ok {
		return 0, 0, fmt.Errorf("malformed hunk header %s", quote(header))
	}
	end := strings.Index(rest, " @@")
	if end < 0 {
		return 0, 0, fmt.Errorf("malformed hunk header %s", quote(header))
	}
	parts := strings.Fields(rest[:end])
	if len(parts) != 2 || !strings.HasPrefix(parts[0], "-") || !strings.HasPrefix(parts[1], "+") {
		return 0, 0, fmt.Errorf("malformed hunk header %s", quote(header))
	}
	if oldN, err = rangeCount(parts[0][1:]); err != nil {
		return 0, 0, fmt.Errorf("hunk header %s: %w", quote(header), err)
	}
	if newN, err = rangeCount(parts[1][1:]); err != nil {
		return 0, 0, fmt.Errorf("hunk header %s: %w", quote(header), err)
	}
	return oldN, newN, nil
}

func rangeCount(r string) (int, error) {
	start, count, hasCount := strings.Cut(r, ",")
	if _, err := strconv.ParseUint(start, 10, 32); err != nil {
		return 0, fmt.Errorf("bad line number %s", quote(start))
	}
	if !hasCount {
		return 1, nil
	}
	n, err := strconv.ParseUint(count, 10, 32)
	if err != nil || n > 1<<24 {
		return 0, fmt.Errorf("bad line count %s", quote(count))
	}
	return int(n), nil
}

func (f *fileDiff) operations() ([]raw, error) {
	oldP, newP := f.oldPath, f.newPath
	if f.renameFrom != "" || f.renameTo != "" {
		oldP, newP = f.renameFrom, f.renameTo
		if oldP == "" || newP == "" {
			return nil, errorf(f.source, "", "rename needs both 'rename from' and 'rename to'")
		}
	}
	if oldP == "" && newP == "" && !f.newFile && !f.deleted {
		oldP, newP = f.gitOld, f.gitNew
	}
	if f.newFile && newP == "" {
		newP = f.gitNew
	}
	if f.deleted && oldP == "" {
		oldP = f.gitOld
	}
	switch {
	case f.newFile || (oldP == "" && newP != ""):
		if newP == "" {
			return nil, errorf(f.source, "target", "new file without a path")
		}
		var b strings.Builder
		for _, h := range f.hunks {
			for j, l := range h.lines {
				switch {
				case strings.HasPrefix(l, "+"):
					b.WriteString(l[1:])
					if j+1 >= len(h.lines) || !strings.HasPrefix(h.lines[j+1], "\\") {
						b.WriteByte('\n')
					}
				case strings.HasPrefix(l, "\\"):
				default:
					return nil, errorf(f.source, "", "new file %s has context or removed lines", quote(newP))
				}
			}
		}
		return []raw{{Type: string(TypeFileEdit), Action: ActionCreate, Target: newP, Content: b.String(), Source: f.source}}, nil
	case f.deleted || (newP == "" && oldP != ""):
		if oldP == "" {
			return nil, errorf(f.source, "target", "deleted file without a path")
		}
		return []raw{{Type: string(TypeFileEdit), Action: ActionDelete, Target: oldP, Source: f.source}}, nil
	case oldP == "" && newP == "":
		return nil, errorf(f.source, "target", "no file path in the diff headers")
	}
	var ops []raw
	target := oldP
	if oldP != newP {
		ops = append(ops, raw{Type: string(TypeFileEdit), Action: ActionRename, Target: oldP,
			Metadata: map[string]string{MetaTo: newP}, Source: f.source})
		target = newP
	}
	if len(f.hunks) > 0 {
		ops = append(ops, raw{Type: string(TypeFileEdit), Action: ActionPatch, Target: target,
			Content: f.render(target), Source: f.source})
	}
	return ops, nil
}

// render writes the per-file diff in one canonical shape, whatever headers the author used.
func (f *fileDiff) render(target string) string {
	var b strings.Builder
	b.WriteString("--- a/" + target + "\n+++ b/" + target + "\n")
	for _, h := range f.hunks {
		b.WriteString(h.header + "\n")
		for _, l := range h.lines {
			b.WriteString(l + "\n")
		}
	}
	return b.String()
}

// headerPath reads the path of a ---/+++ header: strips a timestamp after a tab, quotes, and
// the a/ or b/ prefix; /dev/null becomes "".
func headerPath(s, strip string) string {
	s = strings.TrimSuffix(s, "\r")
	if tab := strings.IndexByte(s, '\t'); tab >= 0 {
		s = s[:tab]
	}
	s = unquotePath(strings.TrimSpace(s))
	if s == "/dev/null" {
		return ""
	}
	return strings.TrimPrefix(s, strip)
}

func unquotePath(s string) string {
	if len(s) >= 2 && s[0] == '"' {
		if u, err := strconv.Unquote(s); err == nil {
			return u
		}
	}
	return s
}

// splitGitHeader splits "a/P b/P" (P may contain spaces when both sides are equal).
func splitGitHeader(rest string) (string, string) {
	rest = strings.TrimSuffix(rest, "\r")
	if n := len(rest) - 5; n > 0 && n%2 == 0 {
		n /= 2
		if strings.HasPrefix(rest, "a/") && rest[2+n:5+n] == " b/" && rest[2:2+n] == rest[5+n:] {
			return rest[2 : 2+n], rest[5+n:]
		}
	}
	parts := strings.Fields(rest)
	if len(parts) == 2 {
		return strings.TrimPrefix(unquotePath(parts[0]), "a/"), strings.TrimPrefix(unquotePath(parts[1]), "b/")
	}
	return "", ""
}
