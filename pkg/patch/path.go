package patch

import (
	"path"
	"strconv"
	"strings"
	"unicode/utf8"
)

// NormalizePath turns a workspace-relative path into its canonical slash form, refusing
// anything that could leave the workspace or confuse the file system: empty names, NUL bytes,
// invalid UTF-8, absolute or drive-letter paths, backslashes and ".." components.
func NormalizePath(p string) (string, error) {
	switch {
	case strings.TrimSpace(p) == "":
		return "", errString("empty path")
	case strings.ContainsRune(p, 0):
		return "", errString("path contains a NUL byte")
	case !utf8.ValidString(p):
		return "", errString("path is not valid UTF-8")
	case strings.ContainsRune(p, '\\'):
		return "", errString("path contains a backslash")
	case strings.HasPrefix(p, "/") || strings.HasPrefix(p, "~"):
		return "", errString("absolute path " + quote(p) + " is not allowed")
	case len(p) >= 2 && p[1] == ':' && isLetter(p[0]):
		return "", errString("drive-letter path " + quote(p) + " is not allowed")
	}
	for _, c := range p {
		if c < 0x20 || c == 0x7f {
			return "", errString("path contains a control character")
		}
	}
	for _, part := range strings.Split(p, "/") {
		if part == ".." {
			return "", errString("path " + quote(p) + " contains '..'")
		}
		// Names that differ only by surrounding spaces look identical in an approval message.
		if part != strings.TrimSpace(part) {
			return "", errString("path " + quote(p) + " has a name with leading or trailing spaces")
		}
	}
	clean := path.Clean(p)
	if clean == "." {
		return "", errString("path " + quote(p) + " names the workspace root")
	}
	return clean, nil
}

// HasPathPrefix reports whether the canonical path p lies under prefix on a path-component
// boundary: "docs/" and "docs" both cover "docs/a.md" but not "docsx/b.md"; "README.md" covers
// only itself. An empty prefix covers nothing.
func HasPathPrefix(p, prefix string) bool {
	prefix = strings.TrimSuffix(prefix, "/")
	if prefix == "" || prefix == "." {
		return false
	}
	if p == prefix {
		return true
	}
	return strings.HasPrefix(p, prefix+"/")
}

type errString string

func (e errString) Error() string { return string(e) }

func isLetter(b byte) bool { return (b >= 'a' && b <= 'z') || (b >= 'A' && b <= 'Z') }

func quote(s string) string {
	if len(s) > 80 {
		s = s[:80] + "…"
	}
	return strconv.Quote(s)
}
