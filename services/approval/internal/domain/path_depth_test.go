package domain

import (
	"strings"
	"testing"
)

// splitUnderAnyDepth is the plain statement of pathUnderAnyDepth (split both, compare every
// window); the allocation-free version must agree with it.
func splitUnderAnyDepth(p, deny string) bool {
	want := strings.FieldsFunc(deny, func(r rune) bool { return r == '/' })
	if len(want) == 0 {
		return false
	}
	have := strings.Split(p, "/")
	for i := 0; i+len(want) <= len(have); i++ {
		match := true
		for j, w := range want {
			match = match && sameName(have[i+j], w)
		}
		if match {
			return true
		}
	}
	return false
}

func TestPathUnderAnyDepthAgreesWithSplitting(t *testing.T) {
	paths := []string{"", "a", "secrets", "secrets/x", "a/secrets/x", "a/Secrets./x", "a/b/secrets", "secretsx/y",
		"a//secrets/x", "a/secrets", ".git/config", "sub/.GIT/hooks", "a/b/c/d", "x/./secrets/y", "a/b/", "/abs/secrets"}
	denies := []string{"", "/", "secrets", "secrets/", "/secrets/", "a/secrets", "a//secrets", "b/c", ".git", "./secrets",
		"secrets/x", "a/b/c/d/e", "c/d", "x/."}
	for _, p := range paths {
		for _, d := range denies {
			if got, want := pathUnderAnyDepth(p, d), splitUnderAnyDepth(p, d); got != want {
				t.Errorf("pathUnderAnyDepth(%q, %q) = %v, want %v", p, d, got, want)
			}
		}
	}
}
