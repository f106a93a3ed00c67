package telemetry

import (
	"bytes"
	"context"
	"errors"
	"strings"
	"testing"

	"github.com/picoclaw-suite/picoclaw/pkg/jobid"
)

func TestLoggerAddsJobIDAndMasksSecrets(t *testing.T) {
	var buf bytes.Buffer
	log := NewLogger(&buf, "info", "approval")
	ctx := jobid.WithJobID(context.Background(), "job_20261121_001")
	log.InfoContext(ctx, "llm.call",
		"api_key", "sk-proj-abcdefghijklmnopqrstuvwx",
		"note", "header was Bearer abcdefghijklmnop",
		"err", errors.New("dial postgres://app:hunter2secret@db/x failed"),
		"route", "CODE")
	out := buf.String()
	for _, leak := range []string{"abcdefghijklmnopqrstuvwx", "abcdefghijklmnop", "hunter2secret"} {
		if strings.Contains(out, leak) {
			t.Errorf("log leaks %q: %s", leak, out)
		}
	}
	for _, want := range []string{`"job_id":"job_20261121_001"`, `"service":"approval"`, `"route":"CODE"`} {
		if !strings.Contains(out, want) {
			t.Errorf("log lacks %s: %s", want, out)
		}
	}
}

func TestLoggerDoesNotDuplicateJobID(t *testing.T) {
	var buf bytes.Buffer
	log := NewLogger(&buf, "debug", "")
	ctx := jobid.WithJobID(context.Background(), "job_20261121_001")
	log.InfoContext(ctx, "x", "job_id", "job_20261121_001")
	if n := strings.Count(buf.String(), "job_id"); n != 1 {
		t.Fatalf("job_id appears %d times: %s", n, buf.String())
	}
}

func TestShutdownFlushes(t *testing.T) {
	tel, err := New(context.Background(), Config{ServiceName: "x", LogWriter: &bytes.Buffer{}})
	if err != nil {
		t.Fatal(err)
	}
	_, span := tel.Tracer("t").Start(context.Background(), "op")
	span.End()
	if err := tel.Shutdown(context.Background()); err != nil {
		t.Fatal(err)
	}
	if _, err := New(context.Background(), Config{}); err == nil {
		t.Fatal("missing service name accepted")
	}
}
