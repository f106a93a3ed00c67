package domain

import (
	"fmt"
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
		return "", fmt.Errorf("%w: empty path", ErrInvalid)
	case strings.IndexByte(p, 0) >= 0:
		return "", fmt.Errorf("%w: path contains a NUL byte", ErrInvalid)
	case !utf8.ValidString(p):
		return "", fmt.Errorf("%w: path is not valid UTF-8", ErrInvalid)
	case strings.HasPrefix(p, "/"):
		return "", fmt.Errorf("%w: absolute path %q", ErrPermission, p)
	case strings.ContainsRune(p, '\\'):
		return "", fmt.Errorf("%w: backslash in path %q", ErrInvalid, p)
	case len(p) >= 2 && p[1] == ':' && isASCIILetter(p[0]):
		return "", fmt.Errorf("%w: drive path %q", ErrPermission, p)
	case strings.HasPrefix(p, "~"):
		return "", fmt.Errorf("%w: home-relative path %q", ErrPermission, p)
	}
	for _, r := range p {
		if r < 0x20 || r == 0x7f {
			return "", fmt.Errorf("%w: control character in path %q", ErrInvalid, p)
		}
	}
	var parts []string
	for _, c := range strings.Split(p, "/") {
		switch c {
		case "", ".":
			continue
		case "..":
			return "", fmt.Errorf("%w: path %q leaves the workspace", ErrPermission, p)
		}
		if len(c) > maxComponent {
			return "", fmt.Errorf("%w: path component longer than %d bytes", ErrInvalid, maxComponent)
		}
		if IsGitDirName(c) {
			return "", fmt.Errorf("%w: path %q is inside git internals", ErrPermission, p)
		}
		parts = append(parts, c)
	}
	if len(parts) == 0 {
		return "", fmt.Errorf("%w: path %q names the workspace itself", ErrInvalid, p)
	}
	return strings.Join(parts, "/"), nil
}

func isASCIILetter(b byte) bool { return (b >= 'a' && b <= 'z') || (b >= 'A' && b <= 'Z') }

// IsGitDirName reports whether a path component names git's internals (the one rule in
// pkg/patch, shared with approval's hard-deny).
func IsGitDirName(c string) bool { return patch.IsGitDirName(c) }
