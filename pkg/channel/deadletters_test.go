//go:build !serveronly

package channel

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/picoclaw-suite/picoclaw/pkg/bearer"
	"github.com/picoclaw-suite/picoclaw/pkg/chatlink"
	"github.com/picoclaw-suite/picoclaw/pkg/inbox"
	"github.com/picoclaw-suite/picoclaw/pkg/sqlstate"
	"github.com/picoclaw-suite/picoclaw/pkg/testinfra"
)

const approverToken = "0123456789abcdef0123456789abcdef-ops"

// deadAPI is the dead-letter API of a "fake" gateway on a state database, with an event and a
// send that died permanently; handled counts what the consumers handled, by event id.
type deadAPI struct {
	url     string
	inbox   *inbox.Store
	outbox  *inbox.Store
	mu      sync.Mutex
	handled map[string]int
	fail    bool
	db      *sqlstate.DB
}

func startDeadAPI(t *testing.T) *deadAPI {
	t.Helper()
	ctx := context.Background()
	db, err := sqlstate.Open(ctx, filepath.Join(t.TempDir(), "state.db"), sqlstate.Options{})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = db.Close() })
	engine, err := inbox.SQLiteEngine(ctx, db)
	if err != nil {
		t.Fatal(err)
	}
	a := &deadAPI{handled: map[string]int{}, fail: true, db: db}
	seal := []byte("dead-letter-test-seal-0123456789")
	stores := map[string]*inbox.Store{}
	for _, q := range []string{QueueInbox, QueueOutbox} {
		cfg := inbox.Config{Stream: q + ":fake", Group: "g", Seal: seal}
		s, err := inbox.NewStoreOn(engine, cfg)
		if err != nil {
			t.Fatal(err)
		}
		stores[q] = s
		c, err := inbox.NewConsumerOn(engine, cfg, inbox.ConsumerConfig{Name: "c", Block: 20 * time.Millisecond, Backoff: time.Millisecond},
			func(_ context.Context, d inbox.Delivery) error {
				a.mu.Lock()
				defer a.mu.Unlock()
				a.handled[d.ID]++
				if a.fail {
					return inbox.Permanent(errors.New("refused: 400, token=abcdef0123456789"))
				}
				return nil
			})
		if err != nil {
			t.Fatal(err)
		}
		cctx, cancel := context.WithCancel(ctx)
		done := make(chan struct{})
		go func() { defer close(done); _ = c.Run(cctx) }()
		t.Cleanup(func() { cancel(); <-done })
	}
	a.inbox, a.outbox = stores[QueueInbox], stores[QueueOutbox]
	ev, _ := json.Marshal(Event{ID: "E1", Kind: KindMessage, SessionID: "fake:U1", UserID: "U1", Text: "hello, password=hunter22"})
	send, _ := json.Marshal(outbound{SessionID: "fake:U1", Replies: []chatlink.Reply{{Text: "the answer"}}})
	if _, err := a.inbox.Append(ctx, inbox.Event{ID: "E1", Key: "fake:U1", Payload: ev}); err != nil {
		t.Fatal(err)
	}
	if _, err := a.outbox.Append(ctx, inbox.Event{ID: "event:E0", Key: "fake:U1", Payload: send}); err != nil {
		t.Fatal(err)
	}
	testinfra.Eventually(t, 10*time.Second, "two dead letters", func() bool {
		n, _ := a.inbox.Dead(ctx)
		m, _ := a.outbox.Dead(ctx)
		return n == 1 && m == 1
	})
	tokens, err := bearer.Parse("ops:" + approverToken)
	if err != nil {
		t.Fatal(err)
	}
	r := chi.NewRouter()
	api := &deadLetters{channel: "fake", queues: stores, ch: &fakeChannel{}, log: slog.New(slog.DiscardHandler)}
	api.Register(func(method, pattern string, h http.Handler) { r.Method(method, pattern, h) }, tokens)
	srv := httptest.NewServer(r)
	t.Cleanup(srv.Close)
	a.url = srv.URL
	return a
}

func (a *deadAPI) times(id string) int {
	a.mu.Lock()
	defer a.mu.Unlock()
	return a.handled[id]
}

// call makes a request with token ("" = none) and decodes a JSON answer into out.
func (a *deadAPI) call(t *testing.T, method, path, token string, out any) int {
	t.Helper()
	req, err := http.NewRequest(method, a.url+path, nil)
	if err != nil {
		t.Fatal(err)
	}
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	res, err := http.DefaultClient.Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer res.Body.Close()
	body, _ := io.ReadAll(res.Body)
	if out != nil && res.StatusCode < 300 {
		if err := json.Unmarshal(body, out); err != nil {
			t.Fatalf("%s %s: %v: %s", method, path, err, body)
		}
	}
	if res.StatusCode >= 400 && !strings.Contains(string(body), `"code"`) {
		t.Errorf("%s %s: error body %s", method, path, body)
	}
	return res.StatusCode
}

func TestDeadLetterAPIAuth(t *testing.T) {
	a := startDeadAPI(t)
	var list DeadLetterList
	if code := a.call(t, http.MethodGet, DeadLettersPath, approverToken, &list); code != http.StatusOK || len(list.DeadLetters) != 2 {
		t.Fatalf("list = %d %+v", code, list)
	}
	id := list.DeadLetters[0].ID
	for _, r := range []struct{ method, path string }{
		{http.MethodGet, DeadLettersPath},
		{http.MethodGet, DeadLettersPath + "/" + id},
		{http.MethodPost, DeadLettersPath + "/" + id + "/replay"},
		{http.MethodDelete, DeadLettersPath + "/" + id},
	} {
		if code := a.call(t, r.method, r.path, "", nil); code != http.StatusUnauthorized {
			t.Errorf("%s %s without a token = %d", r.method, r.path, code)
		}
		if code := a.call(t, r.method, r.path, "0123456789abcdef0123456789abcdef-not", nil); code != http.StatusForbidden {
			t.Errorf("%s %s with a wrong token = %d", r.method, r.path, code)
		}
	}
	// Nothing was replayed or dropped by the refused calls.
	if code := a.call(t, http.MethodGet, DeadLettersPath, approverToken, &list); code != http.StatusOK || len(list.DeadLetters) != 2 ||
		list.DeadLetters[0].Replayed != nil || list.DeadLetters[1].Replayed != nil {
		t.Fatalf("after refused calls: %d %+v", code, list)
	}
}

func TestDeadLetterAPI(t *testing.T) {
	a := startDeadAPI(t)
	var list DeadLetterList
	a.call(t, http.MethodGet, DeadLettersPath, approverToken, &list)
	byQueue := map[string]DeadLetterJSON{}
	for _, dl := range list.DeadLetters {
		byQueue[dl.Queue] = dl
	}
	in, out := byQueue[QueueInbox], byQueue[QueueOutbox]
	if !strings.HasPrefix(in.ID, "inbox:") || in.EventID != "E1" || in.Key != "fake:U1" || in.Kind != inbox.DeadPermanent ||
		in.Attempts != 1 || in.Channel != "fake" || in.StoredAt.IsZero() || in.DiedAt.IsZero() || in.Payload != "" {
		t.Errorf("inbox dead letter %+v", in)
	}
	if strings.Contains(in.Text, "hunter22") || !strings.HasPrefix(in.Text, "hello") || strings.Contains(in.Reason, "abcdef0123456789") ||
		!strings.Contains(in.Reason, "refused: 400") {
		t.Errorf("inbox dead letter not masked: text %q reason %q", in.Text, in.Reason)
	}
	if !strings.HasPrefix(out.ID, "outbox:") || out.EventID != "event:E0" || out.Text != "the answer" {
		t.Errorf("outbox dead letter %+v", out)
	}
	// One queue, one page at a time.
	var page DeadLetterList
	if code := a.call(t, http.MethodGet, DeadLettersPath+"?queue=outbox&limit=1", approverToken, &page); code != http.StatusOK ||
		len(page.DeadLetters) != 1 || page.DeadLetters[0].ID != out.ID || page.Next == "" {
		t.Fatalf("outbox page = %d %+v", code, page)
	}
	if code := a.call(t, http.MethodGet, DeadLettersPath+"?queue=outbox&before="+page.Next, approverToken, &page); code != http.StatusOK || len(page.DeadLetters) != 0 {
		t.Fatalf("next page = %d %+v", code, page)
	}
	for _, bad := range []string{"?queue=sideways", "?limit=0", "?limit=x", "?before=1-1"} {
		if code := a.call(t, http.MethodGet, DeadLettersPath+bad, approverToken, nil); code != http.StatusBadRequest {
			t.Errorf("list%s = %d", bad, code)
		}
	}
	var shown DeadLetterJSON
	if code := a.call(t, http.MethodGet, DeadLettersPath+"/"+in.ID, approverToken, &shown); code != http.StatusOK ||
		shown.ID != in.ID || !strings.Contains(shown.Payload, `"ID":"E1"`) || strings.Contains(shown.Payload, "hunter22") {
		t.Fatalf("show = %d %+v", code, shown)
	}
	for _, missing := range []string{"inbox:1-999", "outbox:nonsense", "sideways:1-1", "1-1"} {
		if code := a.call(t, http.MethodGet, DeadLettersPath+"/"+missing, approverToken, nil); code != http.StatusNotFound {
			t.Errorf("show %s = %d", missing, code)
		}
		if code := a.call(t, http.MethodPost, DeadLettersPath+"/"+missing+"/replay", approverToken, nil); code != http.StatusNotFound {
			t.Errorf("replay %s = %d", missing, code)
		}
	}

	// Replay, twice: enqueued and handled once, the second answer names the first replay.
	a.mu.Lock()
	a.fail = false
	a.mu.Unlock()
	var first, second ReplayJSON
	if code := a.call(t, http.MethodPost, DeadLettersPath+"/"+in.ID+"/replay", approverToken, &first); code != http.StatusOK || first.Already || first.Entry == "" {
		t.Fatalf("replay = %d %+v", code, first)
	}
	if code := a.call(t, http.MethodPost, DeadLettersPath+"/"+in.ID+"/replay", approverToken, &second); code != http.StatusOK || !second.Already || second.Entry != first.Entry {
		t.Fatalf("second replay = %d %+v", code, second)
	}
	testinfra.Eventually(t, 10*time.Second, "the replayed event handled", func() bool { return a.times("E1") == 2 })
	testinfra.Eventually(t, 10*time.Second, "the replayed event acknowledged", func() bool {
		st, err := a.inbox.Stats(context.Background())
		return err == nil && st.Pending == 0 && st.Lag == 0
	})
	if n := a.times("E1"); n != 2 {
		t.Fatalf("handled %d times: the first try and one replay", n)
	}
	a.call(t, http.MethodGet, DeadLettersPath+"/"+in.ID, approverToken, &shown)
	if shown.Replayed == nil || shown.Replayed.Entry != first.Entry {
		t.Fatalf("shown after replay %+v", shown)
	}

	// A dead letter edited in the storage has no valid seal any more: never replayed.
	if _, err := a.db.Exec(`UPDATE inbox_dead SET payload = ? WHERE stream = 'outbox:fake'`, []byte(`{"session_id":"fake:U2","replies":[]}`)); err != nil {
		t.Fatal(err)
	}
	if code := a.call(t, http.MethodPost, DeadLettersPath+"/"+out.ID+"/replay", approverToken, nil); code != http.StatusConflict {
		t.Fatalf("replay of an edited dead letter = %d", code)
	}

	// Drop: gone for good.
	if code := a.call(t, http.MethodDelete, DeadLettersPath+"/"+out.ID, approverToken, nil); code != http.StatusNoContent {
		t.Fatalf("drop = %d", code)
	}
	for _, r := range []struct{ method, path string }{
		{http.MethodDelete, DeadLettersPath + "/" + out.ID},
		{http.MethodGet, DeadLettersPath + "/" + out.ID},
		{http.MethodPost, DeadLettersPath + "/" + out.ID + "/replay"},
	} {
		if code := a.call(t, r.method, r.path, approverToken, nil); code != http.StatusNotFound {
			t.Errorf("%s %s after drop = %d", r.method, r.path, code)
		}
	}
	if n := a.times("event:E0"); n != 1 {
		t.Fatalf("dropped send handled %d times", n)
	}
}

// TestDecisionsAreNotReplayed: a dead-lettered button press or decision command would decide
// in its sender's name long after; only other events may be replayed.
func TestDecisionsAreNotReplayed(t *testing.T) {
	for _, tc := range []struct {
		ev      Event
		decides bool
	}{
		{Event{Kind: KindMessage, Text: "hello"}, false},
		{Event{Kind: KindMessage, Text: "/status"}, false},
		{Event{Kind: KindFollow}, false},
		{Event{Kind: KindAction, Action: &chatlink.Action{Kind: chatlink.ActionApprove, JobID: "job_20261127_001"}}, true},
		{Event{Kind: KindMessage, Text: "/approve job_20261127_001"}, true},
		{Event{Kind: KindMessage, Text: "  /Deny job_20261127_001 no"}, true},
		{Event{Kind: KindMessage, Text: "/pick 2"}, true},
		{Event{Kind: KindMessage, Text: "/auto-approve on 30m"}, true},
		{Event{Kind: KindMessage, Text: "/approve-similar job_20261127_001"}, true},
	} {
		b, _ := json.Marshal(tc.ev)
		if got := decides(b); got != tc.decides {
			t.Errorf("%+v: decides = %v, want %v", tc.ev, got, tc.decides)
		}
	}
	if !decides([]byte("{")) {
		t.Error("an undecodable payload may be replayed")
	}
}
