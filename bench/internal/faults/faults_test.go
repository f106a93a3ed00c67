package faults

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/picoclaw-suite/picoclaw/pkg/testinfra"

	"github.com/picoclaw-suite/picoclaw/bench/internal/suite"
)

// TestShortFaultRun is the fault run in small, with one and with two replicas of every
// consumer: the real binaries on Postgres and Redis carry 200 LINE messages over 20 chats while
// every service is killed with SIGKILL and stopped with SIGTERM and restarted, Redis and
// Postgres are paused and the LINE API is down for 3 s each and their connections are dropped.
// Every message must be answered exactly once, in its chat's order, with no error reply and no
// dead letter. The full run is `go run ./bench/cmd/picoclaw-bench -faults` (2,000 messages,
// 100 chats, 60 s pauses).
func TestShortFaultRun(t *testing.T) {
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	root, err := suite.Root(wd)
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 12*time.Minute)
	defer cancel()
	bin := t.TempDir()
	if err := suite.Build(ctx, root, bin); err != nil {
		t.Fatal(err)
	}
	for _, replicas := range []int{1, 2} {
		t.Run(fmt.Sprintf("replicas=%d", replicas), func(t *testing.T) {
			pg := testinfra.Postgres(t)
			rd := testinfra.Redis(t)
			logs := t.TempDir()
			res, err := Run(ctx, Options{Root: root, LogDir: logs, BinDir: bin,
				Iso:      &suite.Isolation{DSN: pg.DSN, Schema: pg.Schema, RedisAddr: rd.Addr, RedisPrefix: rd.Prefix},
				Messages: 200, Chats: 20, Pause: 3 * time.Second, Down: time.Second, Gap: 2 * time.Second, Drain: 2 * time.Minute,
				Replicas: replicas, Logf: t.Logf})
			if err != nil {
				t.Fatal(err)
			}
			var md strings.Builder
			res.Markdown(&md)
			t.Log("\n" + md.String())
			if f := res.Failures(); len(f) > 0 {
				t.Errorf("fault run: %s", strings.Join(f, "; "))
				logTails(t, logs, 30)
			}
			if len(res.Faults) != 2*len(suite.Services)+4 {
				t.Errorf("%d faults carried out", len(res.Faults))
			}
			if res.Tally.Sent != 200 || res.Tally.Answered != 200 {
				t.Errorf("sent %d, answered %d", res.Tally.Sent, res.Tally.Answered)
			}
		})
	}
}

func logTails(t *testing.T, dir string, n int) {
	t.Helper()
	files, _ := filepath.Glob(filepath.Join(dir, "*.log"))
	for _, f := range files {
		data, err := os.ReadFile(f)
		if err != nil {
			continue
		}
		lines := strings.Split(strings.TrimRight(string(data), "\n"), "\n")
		if len(lines) > n {
			lines = lines[len(lines)-n:]
		}
		t.Logf("== %s\n%s", filepath.Base(f), strings.Join(lines, "\n"))
	}
}
