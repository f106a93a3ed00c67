package domain

import (
	"errors"
	"strings"
	"testing"
)

func TestCleanPath(t *testing.T) {
	for in, want := range map[string]string{
		"a.txt":           "a.txt",
		"dir/sub/file.go": "dir/sub/file.go",
		"./dir//file":     "dir/file",
		"日本語/ファイル.md":     "日本語/ファイル.md",
		".gitignore":      ".gitignore",
		"a/.github/x":     "a/.github/x",
	} {
		if got, err := CleanPath(in); err != nil || got != want {
			t.Errorf("CleanPath(%q) = %q, %v; want %q", in, got, err, want)
		}
	}
	for in, want := range map[string]error{
		"":                       ErrInvalid,
		".":                      ErrInvalid,
		"./":                     ErrInvalid,
		"/etc/passwd":            ErrPermission,
		"../x":                   ErrPermission,
		"a/../../x":              ErrPermission,
		"a/..":                   ErrPermission,
		"a\x00b":                 ErrInvalid,
		"bad\xffname":            ErrInvalid,
		"a\\..\\b":               ErrInvalid,
		"C:/Windows":             ErrPermission,
		"~/x":                    ErrPermission,
		"a\nb":                   ErrInvalid,
		"a\x7fb":                 ErrInvalid,
		".git/hooks/pre-commit":  ErrPermission,
		".GIT/config":            ErrPermission,
		"sub/.Git/config":        ErrPermission,
		".git./config":           ErrPermission,
		".git /config":           ErrPermission,
		".git. . /hooks/x":       ErrPermission,
		"sub/.GIT/config":        ErrPermission,
		".Git./config":           ErrPermission,
		"a/.gIt ./hooks/x":       ErrPermission,
		"GIT~1/config":           ErrPermission,
		strings.Repeat("x", 256): ErrInvalid,
	} {
		if _, err := CleanPath(in); !errors.Is(err, want) {
			t.Errorf("CleanPath(%q) error = %v, want %v", in, err, want)
		}
	}
}
