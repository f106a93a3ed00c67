package policy

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"
)

func TestHolderReload(t *testing.T) {
	ctx := context.Background()
	file := filepath.Join(t.TempDir(), "policy.yaml")
	write := func(s string) {
		if err := os.WriteFile(file, []byte(s), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	write(string(DefaultSource()))
	failures := 0
	h, err := NewHolder(file, nil, func() { failures++ })
	if err != nil {
		t.Fatal(err)
	}
	first := h.Current().Hash()
	if def := mustPolicy(t, string(DefaultSource())); first != def.Hash() {
		t.Fatalf("hash %s, want the default's %s", first, def.Hash())
	}

	write(string(DefaultSource()) + "\n  - {name: extra, when: 'route == \"X\"', decision: require, reason: x}\n")
	if err := h.Reload(ctx, false); err != nil {
		t.Fatal(err)
	}
	second := h.Current().Hash()
	if second == first || len(h.Current().Rules()) != len(mustPolicy(t, string(DefaultSource())).Rules())+1 {
		t.Fatalf("reload did not take the new file (hash %s)", second)
	}

	write("version: 1\nrules:\n  - {name: broken, when: 'route ==', decision: deny, reason: x}\n")
	err = h.Reload(ctx, false)
	if err == nil || !strings.Contains(err.Error(), `rule "broken": when:`) {
		t.Fatalf("invalid reload err = %v", err)
	}
	if h.Current().Hash() != second || failures != 1 {
		t.Fatalf("after an invalid reload: hash %s (want %s), failures %d", h.Current().Hash(), second, failures)
	}
	// Polling an unchanged invalid file reports it once; SIGHUP tries again.
	if err := h.Reload(ctx, false); err != nil || failures != 1 {
		t.Fatalf("unchanged file: %v, failures %d", err, failures)
	}
	if err := h.Reload(ctx, true); err == nil || failures != 2 {
		t.Fatalf("forced reload: %v, failures %d", err, failures)
	}

	if err := os.Remove(file); err != nil {
		t.Fatal(err)
	}
	if err := h.Reload(ctx, false); err == nil || failures != 3 || h.Current().Hash() != second {
		t.Fatalf("missing file: %v, failures %d", err, failures)
	}
}

func TestHolderWatch(t *testing.T) {
	file := filepath.Join(t.TempDir(), "policy.yaml")
	if err := os.WriteFile(file, DefaultSource(), 0o600); err != nil {
		t.Fatal(err)
	}
	h, err := NewHolder(file, nil, nil)
	if err != nil {
		t.Fatal(err)
	}
	first := h.Current().Hash()
	ctx, cancel := context.WithCancel(context.Background())
	hup := make(chan os.Signal, 1)
	done := make(chan struct{})
	go func() { defer close(done); h.Watch(ctx, time.Hour, hup) }()
	if err := os.WriteFile(file, []byte("version: 1\nrules: []\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	hup <- os.Interrupt
	deadline := time.Now().Add(5 * time.Second)
	for h.Current().Hash() == first && time.Now().Before(deadline) {
		time.Sleep(5 * time.Millisecond)
	}
	cancel()
	<-done
	if h.Current().Hash() == first {
		t.Fatal("the signal did not reload the policy")
	}
}

func TestNewHolderRefusesInvalid(t *testing.T) {
	file := filepath.Join(t.TempDir(), "policy.yaml")
	if err := os.WriteFile(file, []byte("version: 1\nrules:\n  - {name: bad-rule, when: 'nope', decision: deny, reason: x}\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	_, err := NewHolder(file, nil, nil)
	if err == nil || !strings.Contains(err.Error(), `rule "bad-rule": when:`) || !strings.Contains(err.Error(), "undeclared reference") {
		t.Fatalf("err = %v", err)
	}
}
