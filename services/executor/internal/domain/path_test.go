package domain

import (
	"errors"
	"strings"
	"testing"
)

func TestCleanPath(t *testing.T) {
	tests := []struct {
		in   string
		want string
		err  error
	}{
		{"a.txt", "a.txt", nil},
		{"dir/sub/file.go", "dir/sub/file.go", nil},
		{"./dir//file", "dir/file", nil},
		{"日本語/ファイル.md", "日本語/ファイル.md", nil},
		{"", "", ErrInvalid},
		{".", "", ErrInvalid},
		{"./", "", ErrInvalid},
		{"/etc/passwd", "", ErrPermission},
		{"../x", "", ErrPermission},
		{"a/../../x", "", ErrPermission},
		{"a/..", "", ErrPermission},
		{"a\x00b", "", ErrInvalid},
		{"bad\xffname", "", ErrInvalid},
		{"a\\..\\b", "", ErrInvalid},
		{"C:/Windows", "", ErrPermission},
		{"~/x", "", ErrPermission},
		{"a\nb", "", ErrInvalid},
		{"a\x7fb", "", ErrInvalid},
		{".git/hooks/pre-commit", "", ErrPermission},
		{".GIT/config", "", ErrPermission},
		{"sub/.Git/config", "", ErrPermission},
		{".git./config", "", ErrPermission},
		{".git /config", "", ErrPermission},
		{".git. . /hooks/x", "", ErrPermission},
		{".gitignore", ".gitignore", nil},
		{"a/.github/x", "a/.github/x", nil},
		{"sub/.GIT/config", "", ErrPermission},
		{".Git./config", "", ErrPermission},
		{"a/.gIt ./hooks/x", "", ErrPermission},
		{"GIT~1/config", "", ErrPermission},
		{".gitignore", ".gitignore", nil},
		{strings.Repeat("x", 256), "", ErrInvalid},
	}
	for _, tt := range tests {
		got, err := CleanPath(tt.in)
		if tt.err != nil {
			if !errors.Is(err, tt.err) {
				t.Errorf("CleanPath(%q) error = %v, want %v", tt.in, err, tt.err)
			}
			continue
		}
		if err != nil || got != tt.want {
			t.Errorf("CleanPath(%q) = %q, %v; want %q", tt.in, got, err, tt.want)
		}
	}
}
