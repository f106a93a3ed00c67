//go:build !serveronly

package channel_test

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/picoclaw-suite/picoclaw/pkg/channel"
	"github.com/picoclaw-suite/picoclaw/pkg/chatlink"
	"github.com/picoclaw-suite/picoclaw/pkg/chatlink/chatlinktest"
	"github.com/picoclaw-suite/picoclaw/pkg/config"
	"github.com/picoclaw-suite/picoclaw/pkg/sqlstate"
	"github.com/picoclaw-suite/picoclaw/pkg/svcauth"
	"github.com/picoclaw-suite/picoclaw/pkg/testinfra"
)

// jsonChannel stands in for LINE (the gateway vouches for line users only): its webhook body is
// a channel.Event in JSON, its sends go through the runtime's sent marks and are counted.
type jsonChannel struct {
	once *channel.Once
	mu   sync.Mutex
	sent map[string]int // by send key
}

func (c *jsonChannel) Name() string { return "line" }

func (c *jsonChannel) Decode(b []byte) (channel.Event, error) {
	var ev channel.Event
	err := json.Unmarshal(b, &ev)
	return ev, err
}

func (c *jsonChannel) Target(session string) (channel.Target, error) {
	return channel.Target{SessionID: session}, nil
}

func (c *jsonChannel) Send(ctx context.Context, _ channel.Target, key string, replies []chatlink.Reply) (int, error) {
	return len(replies), c.once.Do(ctx, key, func() error {
		c.mu.Lock()
		defer c.mu.Unlock()
		c.sent[key]++
		return nil
	})
}

func (c *jsonChannel) sends(key string) int {
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.sent[key]
}

// With state.engine sqlite a gateway keeps its inbox and sent marks in the state database and
// needs no Redis: Redis points at a port where nothing listens, and a webhook event is still
// stored, deduplicated, answered once and acknowledged; readiness checks the database.
func TestRunOnSQLite(t *testing.T) {
	path := filepath.Join(t.TempDir(), "state.db")
	common := config.DefaultCommon()
	common.Auth = testinfra.Auth(svcauth.GatewayLine)
	common.Redis.Addr = "127.0.0.1:1"
	common.State = config.State{Engine: config.StateSQLite, Path: path, Sync: "normal"}
	common.HeartbeatSender.Enabled = false
	chat := chatlinktest.NewFakeChat()
	t.Cleanup(func() { close(chat.Release) })
	common.Services.ChatMio.URL = chatlinktest.Start(t, chat).URL
	settings := channel.DefaultSettings("http://127.0.0.1:1")
	settings.AllowedUsers = []string{"U1"}
	settings.Inbox.Consumer = "test"
	settings.Inbox.Block = 100 * time.Millisecond
	ln, pub := testinfra.Listen(t), testinfra.Listen(t)
	logs := &testinfra.SyncBuffer{}
	ch := &jsonChannel{sent: map[string]int{}}
	spec := channel.Spec{Service: svcauth.GatewayLine, Channel: "line", Display: "LINE", Common: common, Settings: settings,
		Wiring: channel.Wiring{Listener: ln, PublicListener: pub, LogWriter: logs},
		Build: func(_ context.Context, env channel.Env) (channel.Channel, error) {
			ch.once = env.Once
			env.HandlePublic(http.MethodPost, "/webhook", http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				body, _ := io.ReadAll(r.Body)
				var ev channel.Event
				if err := json.Unmarshal(body, &ev); err != nil {
					w.WriteHeader(http.StatusBadRequest)
					return
				}
				// A typed decision names its job: stored without allocating a JobID.
				if _, err := env.Ingest.Store(r.Context(), channel.Incoming{ID: ev.ID, Key: ev.SessionID, Payload: body,
					StartsJob: true, Text: ev.Text}); err != nil {
					w.WriteHeader(http.StatusInternalServerError)
					return
				}
				w.WriteHeader(http.StatusOK)
			}))
			return ch, nil
		},
	}
	testinfra.Serve(t, spec.Service, testinfra.URL(pub)+"/readyz", func(ctx context.Context) error { return channel.Run(ctx, spec) })
	defer func() {
		if t.Failed() {
			t.Logf("gateway log:\n%s", logs.String())
		}
	}()

	body, _ := json.Marshal(channel.Event{ID: "ev-1", Kind: channel.KindMessage, SessionID: "line:U1", UserID: "U1",
		Text: "/approve job_20261121_001"})
	for range 2 { // the channel redelivers
		res, err := http.Post(testinfra.URL(pub)+"/webhook", "application/json", bytes.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		_ = res.Body.Close()
		if res.StatusCode != http.StatusOK {
			t.Fatalf("webhook: %d", res.StatusCode)
		}
	}
	db, err := sqlstate.Open(context.Background(), path, sqlstate.Options{})
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	rows := func(query string) int64 {
		var n int64
		if err := db.QueryRow(query).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	testinfra.Eventually(t, 10*time.Second, "the answer", func() bool { return ch.sends("event:ev-1") == 1 })
	testinfra.Eventually(t, 10*time.Second, "the ack", func() bool {
		return rows(`SELECT count(*) FROM inbox_entries`)+rows(`SELECT count(*) FROM inbox_pending`) == 0
	})
	if n := len(chat.Requests()); n != 1 {
		t.Fatalf("chat-mio asked %d times, want once", n)
	}
	// One group on the inbox, one on the outbox; the answer went out at once (the chat had
	// nothing in the outbox), so the outbox holds nothing.
	if n := rows(`SELECT count(*) FROM inbox_groups WHERE grp = 'gateway-line' AND stream IN ('picoclaw:inbox:line', 'picoclaw:outbox:line')`); n != 2 {
		t.Fatalf("consumer groups = %d", n)
	}
	if n := rows(`SELECT count(*) FROM inbox_streams WHERE stream = 'picoclaw:outbox:line' AND last_seq > 0`); n != 0 {
		t.Fatalf("outbox appends = %d", n)
	}
	if n := rows(`SELECT count(*) FROM inbox_marks WHERE mark = 'picoclaw:line:sent:event:ev-1'`); n != 1 {
		t.Fatalf("sent marks = %d", n)
	}

	// Readiness is the state database's: without the inbox tables the gateway is not ready.
	ready := func() (int, string) {
		res, err := http.Get(testinfra.URL(ln) + "/readyz")
		if err != nil {
			t.Fatal(err)
		}
		defer res.Body.Close()
		b, _ := io.ReadAll(res.Body)
		return res.StatusCode, string(b)
	}
	if code, _ := ready(); code != http.StatusOK {
		t.Fatalf("readyz = %d", code)
	}
	if _, err := db.Exec(`ALTER TABLE inbox_streams RENAME TO inbox_streams_away`); err != nil {
		t.Fatal(err)
	}
	if code, b := ready(); code != http.StatusServiceUnavailable || !strings.Contains(b, `"sqlite"`) {
		t.Fatalf("readyz without the tables = %d %s", code, b)
	}
	if _, err := db.Exec(`ALTER TABLE inbox_streams_away RENAME TO inbox_streams`); err != nil {
		t.Fatal(err)
	}
	if code, b := ready(); code != http.StatusOK {
		t.Fatalf("readyz after = %d %s", code, b)
	}
}
