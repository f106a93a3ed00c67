package inbox_test

import (
	"context"
	"testing"

	"github.com/picoclaw-suite/picoclaw/pkg/inbox"
	"github.com/picoclaw-suite/picoclaw/pkg/testinfra"
)

// Redis forgets its scripts when it restarts (or on SCRIPT FLUSH): Append loads the dedupe
// script again and goes on.
func TestRedisAppendSurvivesScriptFlush(t *testing.T) {
	r := testinfra.Redis(t)
	s, err := inbox.NewStore(r.Client, inbox.Config{Stream: r.Prefix + "inbox:test", Seal: testSeal})
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := s.Append(ctx, inbox.Event{ID: "a", Key: "k"}); err != nil {
		t.Fatal(err)
	}
	if err := r.Client.ScriptFlush(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	res, err := s.Append(ctx, inbox.Event{ID: "b", Key: "k"}, inbox.Event{ID: "a", Key: "k"})
	if err != nil || res.Stored != 1 || res.Duplicate != 1 {
		t.Fatalf("after script flush: %+v, %v", res, err)
	}
}
