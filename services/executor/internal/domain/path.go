package domain

import (
	"strconv"
	"strings"
	"unicode/utf8"

	"github.com/picoclaw-suite/picoclaw/pkg/patch"
)

// maxComponent is the longest file name component common file systems accept.
const maxComponent = 255

// CleanPath checks a workspace-relative path from a patch and returns its canonical slash form.
// It refuses what could leave or confuse the workspace before anything touches the disk:
// absolute and drive paths, any ".." component, NUL and control bytes, invalid UTF-8,
// backslashes and git internals. Symlink escapes are caught later by os.Root.
func CleanPath(p string) (string, error) {
	switch {
	case p == "":
		return "", Fail(ErrInvalid, CodePathEmpty)
	case strings.IndexByte(p, 0) >= 0:
		return "", Fail(ErrInvalid, CodePathNUL)
	case !utf8.ValidString(p):
		return "", Fail(ErrInvalid, CodePathNotUTF8)
	case strings.HasPrefix(p, "/"):
		return "", Fail(ErrPermission, CodePathAbsolute, strconv.Quote(p))
	case strings.ContainsRune(p, '\\'):
		return "", Fail(ErrInvalid, CodePathBackslash, strconv.Quote(p))
	case len(p) >= 2 && p[1] == ':' && isASCIILetter(p[0]):
		return "", Fail(ErrPermission, CodePathDrive, strconv.Quote(p))
	case strings.HasPrefix(p, "~"):
		return "", Fail(ErrPermission, CodePathHome, strconv.Quote(p))
	}
	for _, r := range p {
		if r < 0x20 || r == 0x7f {
			return "", Fail(ErrInvalid, CodePathControl, strconv.Quote(p))
		}
	}
	var parts []string
	for _, c := range strings.Split(p, "/") {
		switch c {
		case "", ".":
			continue
		case "..":
			return "", Fail(ErrPermission, CodeLeavesWorkspace, strconv.Quote(p))
		}
		if len(c) > maxComponent {
			return "", Fail(ErrInvalid, CodePathComponent, maxComponent)
		}
		if IsGitDirName(c) {
			return "", Fail(ErrPermission, CodePathGit, strconv.Quote(p))
		}
		parts = append(parts, c)
	}
	if len(parts) == 0 {
		return "", Fail(ErrInvalid, CodePathIsWorkspace, strconv.Quote(p))
	}
	return strings.Join(parts, "/"), nil
}

func isASCIILetter(b byte) bool { return (b >= 'a' && b <= 'z') || (b >= 'A' && b <= 'Z') }

// IsGitDirName reports whether a path component names git's internals (the one rule in
// pkg/patch, shared with approval's hard-deny).
func IsGitDirName(c string) bool { return patch.IsGitDirName(c) }
