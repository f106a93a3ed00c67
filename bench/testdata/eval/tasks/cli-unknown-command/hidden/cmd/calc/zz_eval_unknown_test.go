package main

import (
	"bytes"
	"strings"
	"testing"
)

func TestEvalUnknownCommand(t *testing.T) {
	var stdout, stderr bytes.Buffer
	status := run([]string{"pow", "2", "3"}, &stdout, &stderr)
	if status != 2 || stdout.Len() != 0 {
		t.Errorf("run(pow) = %d, stdout %q; want 2 and no output", status, stdout.String())
	}
	if !strings.Contains(stderr.String(), "unknown command: pow") || !strings.Contains(stderr.String(), "usage:") {
		t.Errorf("stderr %q: want the unknown command and the usage text", stderr.String())
	}
}
