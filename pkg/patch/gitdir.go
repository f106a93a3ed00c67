package patch

import "strings"

// IsGitDirName reports whether one path component names the repository's git directory on
// some file system: ".git" in any letter case, with trailing dots or spaces (dropped by Windows),
// with code points HFS+ ignores (".g\u200cit"), as an NTFS stream (".git::$INDEX_ALLOCATION") or
// as the 8.3 short name "git~1". git itself refuses the same spellings in the index.
func IsGitDirName(name string) bool {
	if i := strings.IndexByte(name, ':'); i >= 0 {
		name = name[:i]
	}
	name = strings.Map(func(r rune) rune {
		if hfsIgnorable(r) {
			return -1
		}
		return r
	}, name)
	name = strings.TrimRight(name, ". ")
	return strings.EqualFold(name, ".git") || strings.EqualFold(name, "git~1")
}

// TouchesGitDir reports whether any component of the slash path p names a git directory
// ("sub/.GiT/config", ".git./hooks"). Backslashes count as separators too, so a Windows
// spelling cannot slip through.
func TouchesGitDir(p string) bool {
	for _, part := range strings.FieldsFunc(p, func(r rune) bool { return r == '/' || r == '\\' }) {
		if IsGitDirName(part) {
			return true
		}
	}
	return false
}

// hfsIgnorable are the code points HFS+ drops when comparing names (the list git uses in
// is_hfs_dotgit).
func hfsIgnorable(r rune) bool {
	switch {
	case r >= 0x200c && r <= 0x200f, r >= 0x202a && r <= 0x202e, r >= 0x206a && r <= 0x206f, r == 0xfeff:
		return true
	}
	return false
}
