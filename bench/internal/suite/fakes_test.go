package suite

import (
	"bytes"
	"net/http"
	"testing"
	"time"
)

// TestLineAPIHandsRepliesToTheirWaiter: a reply to an awaited token reaches its waiter with the
// time it arrived; a reply to a token nobody issued is refused, as LINE does; pushes are counted.
func TestLineAPIHandsRepliesToTheirWaiter(t *testing.T) {
	l := NewLineAPI()
	defer l.Close()
	call := func(path, body string) int {
		t.Helper()
		req, err := http.NewRequest(http.MethodPost, l.URL+path, bytes.NewBufferString(body))
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set("Authorization", "Bearer "+LineToken)
		req.Header.Set("Content-Type", "application/json")
		res, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		res.Body.Close()
		return res.StatusCode
	}
	wait := l.Await("tok-1")
	before := time.Now()
	if code := call("/v2/bot/message/reply", `{"replyToken":"tok-1","messages":[{"type":"text","text":"hi"}]}`); code != http.StatusOK {
		t.Fatalf("reply: %d", code)
	}
	select {
	case r := <-wait:
		if r.Text != "hi" || r.At.Before(before) {
			t.Fatalf("reply %+v", r)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("waiter not served")
	}
	if code := call("/v2/bot/message/reply", `{"replyToken":"never-issued","messages":[{"type":"text","text":"x"}]}`); code != http.StatusBadRequest {
		t.Fatalf("unknown token: %d", code)
	}
	if code := call("/v2/bot/message/push", `{"to":"U1","messages":[{"type":"text","text":"x"}]}`); code != http.StatusOK {
		t.Fatalf("push: %d", code)
	}
	if l.Replies.Load() != 1 || l.Pushes.Load() != 1 || l.Unawaited.Load() != 0 {
		t.Fatalf("counts: replies %d pushes %d unawaited %d", l.Replies.Load(), l.Pushes.Load(), l.Unawaited.Load())
	}
}
