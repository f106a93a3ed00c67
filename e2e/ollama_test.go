package e2e

import (
	"path/filepath"
	"strings"
	"testing"
)

// TestLocalModelMissingOnAMessage: the local models vanish from Ollama while the suite runs.
// The first message makes the service that meets the failure run restart_command once and
// try again, and the user gets the answer. A model that a restart cannot bring back (removed)
// gets the user a message saying what to run, without restarting Ollama again within the
// cool-down.
func TestLocalModelMissingOnAMessage(t *testing.T) {
	file := filepath.Join(t.TempDir(), "ollama-restarted")
	s := startSuite(t, binDir, "PICOCLAW_OLLAMA_RESTART_COMMAND=touch,"+file)
	s.ollama.SetRestartFile(file)
	say := func(id, text string) outMessage {
		t.Helper()
		before := len(s.lineMessages())
		s.lineWebhook(t, lineEvent(id, map[string]any{
			"type": "message", "message": map[string]any{"id": id, "type": "text", "quoteToken": "q" + id, "text": text},
		}))
		return waitMessage(t, "the answer to "+id, flowTimeout, func() []outMessage { return s.lineMessages()[before:] }, s.line.Problems,
			func(m outMessage) bool { return m.text() != "" })
	}

	s.ollama.MissingUntilRestart("chat-v1:latest", "worker-v1:latest")
	if got := say("01E2EOLLAMAMISSING0000001", "おはよう").text(); !strings.Contains(got, "はい、Mio です。") {
		t.Fatalf("answer after the restart: %q", got)
	}
	if n := s.ollama.Restarts(); n != 1 {
		t.Fatalf("restarts = %d, want 1", n)
	}

	s.ollama.RemoveModel("chat-v1:latest")
	for i, id := range []string{"01E2EOLLAMAREMOVED0000001", "01E2EOLLAMAREMOVED0000002"} {
		got := say(id, "もしもし").text()
		if !strings.Contains(got, "chat-v1:latest") || !strings.Contains(got, "picoclaw models setup") {
			t.Fatalf("message %d: %q", i, got)
		}
	}
	// chat-mio restarted Ollama for the first message moments ago: within the cool-down a model
	// that is still missing is reported at once, without another restart.
	if n := s.ollama.Restarts(); n != 1 {
		t.Errorf("restarts = %d, want 1", n)
	}
	logs := s.proc(t, "chat-mio").logs.String()
	if strings.Count(logs, `"msg":"llm.ollama_restart"`) != 1 || !strings.Contains(logs, `"command":"touch `) {
		t.Errorf("chat-mio restart log:\n%s", logs)
	}
	s.noProblems(t)
}
