package suite

import (
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
	"time"
)

func TestWebhookFromBanner(t *testing.T) {
	if got := WebhookFromBanner("  LINE webhook: http://127.0.0.1:38703/line/webhook"); got != "http://127.0.0.1:38703/line/webhook" {
		t.Fatalf("got %q", got)
	}
	if got := WebhookFromBanner("  approval console: http://127.0.0.1:41835/ui/"); got != "" {
		t.Fatalf("got %q from another line", got)
	}
}

// The banner watch finds the webhook line however the output is cut into writes, and keeps
// everything written.
func TestBannerWatchSeesTheWebhookLineAcrossWrites(t *testing.T) {
	w := &bannerWatch{ready: make(chan struct{}), start: time.Now()}
	out := "PicoClaw Suite — embedded mode (7 services, 95ms)\n  LINE webhook: http://127.0.0.1:1/line/webhook\n  Running as a service\n"
	for i := 0; i < len(out); i += 7 {
		if _, err := w.Write([]byte(out[i:min(i+7, len(out))])); err != nil {
			t.Fatal(err)
		}
	}
	select {
	case <-w.ready:
	default:
		t.Fatal("webhook line not seen")
	}
	if w.url != "http://127.0.0.1:1/line/webhook" || w.at <= 0 || w.String() != out {
		t.Fatalf("url %q at %v output %q", w.url, w.at, w.String())
	}
}

func TestStartedAddrsFromSuiteLog(t *testing.T) {
	log := strings.Join([]string{
		`{"time":"t","level":"INFO","msg":"server.started","service":"coder-order","addr":"127.0.0.1:33297"}`,
		`{"time":"t","level":"INFO","msg":"router.rules_loaded","service":"router-shiro","addr":"not a listener"}`,
		`{"time":"t","level":"INFO","msg":"server.started","service":"approval","addr":"127.0.0.1:41000","public_addr":"127.0.0.1:41835"}`,
		`not json "server.started"`,
		`{"time":"t","level":"INFO","msg":"server.started","service":"approval","addr":"127.0.0.1:42000"}`,
	}, "\n")
	got, err := startedAddrs(strings.NewReader(log))
	if err != nil {
		t.Fatal(err)
	}
	// A restart logged into the same file: the last record counts.
	want := map[string]string{"coder-order": "127.0.0.1:33297", "approval": "127.0.0.1:42000"}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}

func TestDataFilesListsEveryFileWithItsSize(t *testing.T) {
	dir := t.TempDir()
	for path, size := range map[string]int{"state.db": 4096, "state.db-wal": 100, "credentials/audit.key": 65} {
		p := filepath.Join(dir, path)
		if err := os.MkdirAll(filepath.Dir(p), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(p, make([]byte, size), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	if err := os.Mkdir(filepath.Join(dir, "workspace"), 0o755); err != nil {
		t.Fatal(err)
	}
	got, err := DataFiles(dir)
	if err != nil {
		t.Fatal(err)
	}
	want := []File{{"credentials/audit.key", 65}, {"state.db", 4096}, {"state.db-wal", 100}}
	if !reflect.DeepEqual(got, want) {
		t.Fatalf("got %v, want %v", got, want)
	}
}
