package buildinfo

import (
	"strings"
	"testing"
)

func TestStampedWins(t *testing.T) {
	i := read("v1.2.3", "0123456789abcdef0123")
	if i.Version != "v1.2.3" || i.Commit != "0123456789ab" || i.Modified || !strings.HasPrefix(i.Go, "go") {
		t.Fatalf("%+v", i)
	}
	if s := i.String(); s != "v1.2.3 (0123456789ab, "+i.Go+")" {
		t.Fatalf("%q", s)
	}
}

func TestUnstampedFallsBack(t *testing.T) {
	i := read("", "")
	if i.Version == "" || i.Go == "" {
		t.Fatalf("%+v", i)
	}
	if Get() != Get() {
		t.Fatal("not stable")
	}
}
