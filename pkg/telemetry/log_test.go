package telemetry

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
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

// TestLabelsAreWrittenAsStrings: a Label is written as the JSON string it is, escaped, beside a
// free-text string that is still masked; outside MaskAttr (a plain JSON handler) it marshals the same.
func TestLabelsAreWrittenAsStrings(t *testing.T) {
	var buf bytes.Buffer
	log := NewLogger(&buf, "info", "")
	log.Info("router.decision", slog.Any("route", Label("CODE1")), slog.Any("matched", Label(`rule "docs"`)),
		slog.String("reason", "token sk-proj-abcdefghijklmnopqrstuvwx"))
	out := buf.String()
	for _, want := range []string{`"route":"CODE1"`, `"matched":"rule \"docs\""`} {
		if !strings.Contains(out, want) {
			t.Errorf("log lacks %s: %s", want, out)
		}
	}
	if strings.Contains(out, "abcdefghijklmnopqrstuvwx") {
		t.Errorf("the free-text reason was not masked: %s", out)
	}
	buf.Reset()
	slog.New(slog.NewJSONHandler(&buf, nil)).Info("x", slog.Any("route", Label("CHAT")))
	if !strings.Contains(buf.String(), `"route":"CHAT"`) {
		t.Errorf("without MaskAttr: %s", buf.String())
	}
}

// The suite's own ids are written as they are without a search for secrets; anything else under
// their keys is searched as every other value is.
func TestOwnIDsSkipTheSearchOnlyWhenTheyAreIDs(t *testing.T) {
	for _, c := range []struct {
		key, value string
		own        bool
	}{
		{"trace_id", "4bf92f3577b34da6a3ce929d0e0e4736", true},
		{"span_id", "00f067aa0ba902b7", true},
		{"job_id", "job_20261121_001", true},
		{"trace_id", "4BF92F3577B34DA6A3CE929D0E0E4736", false},
		{"trace_id", "sk-proj-abcdefghijklmnopqrstuvwx", false},
		{"span_id", "00f067aa0ba902b", false},
		{"job_id", "job_20261121_001 sk-proj-abcdefghijklmnopqrstuvwx", false},
		{"event_id", "4bf92f3577b34da6a3ce929d0e0e4736", false},
	} {
		if got := ownID(c.key, c.value); got != c.own {
			t.Errorf("ownID(%q, %q) = %v, want %v", c.key, c.value, got, c.own)
		}
	}
	var buf bytes.Buffer
	NewLogger(&buf, "info", "").Info("x", "trace_id", "token sk-proj-abcdefghijklmnopqrstuvwx",
		"job_id", "job_20261121_001 sk-proj-abcdefghijklmnopqrstuvwx")
	if strings.Contains(buf.String(), "abcdefghijklmnopqrstuvwx") {
		t.Errorf("a secret under an id's key was not masked: %s", buf.String())
	}
}
