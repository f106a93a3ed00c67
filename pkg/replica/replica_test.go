package replica

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

func TestNewIDIsUniquePerCall(t *testing.T) {
	host, _ := os.Hostname()
	if host == "" {
		host = "svc"
	}
	prefix := fmt.Sprintf("%s-%d-", host, os.Getpid())
	a, b := NewID("svc"), NewID("svc")
	for _, id := range []string{a, b} {
		if !strings.HasPrefix(id, prefix) || len(id) != len(prefix)+8 {
			t.Fatalf("id %q: want %s<8 hex>", id, prefix)
		}
	}
	// Two processes on one host, or two containers with one host name and pid 1, differ.
	if a == b {
		t.Fatalf("two ids are equal: %q", a)
	}
	if Or("pod-0", "svc") != "pod-0" || Or("", "svc") == "" {
		t.Fatal("Or")
	}
}

func TestValid(t *testing.T) {
	for id, want := range map[string]bool{
		"pod-0": true, "executor@host-12-ab": true, "a.b_c": true,
		"": false, "-x": false, "a b": false, "a/b": false, strings.Repeat("a", 65): false,
	} {
		if Valid(id) != want {
			t.Errorf("Valid(%q) = %v, want %v", id, !want, want)
		}
	}
}
