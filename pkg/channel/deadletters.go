package channel

import (
	"cmp"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"slices"
	"strconv"
	"strings"
	"time"

	"github.com/go-chi/chi/v5"

	"github.com/picoclaw-suite/picoclaw/pkg/bearer"
	"github.com/picoclaw-suite/picoclaw/pkg/inbox"
	"github.com/picoclaw-suite/picoclaw/pkg/redact"
	"github.com/picoclaw-suite/picoclaw/pkg/rpcserver"
)

// DeadLettersPath is where a gateway serves its dead letters on its public listener.
const DeadLettersPath = "/v1/deadletters"

// The queues of a gateway whose dead letters the API serves.
const (
	QueueInbox  = "inbox"  // inbound events that could not be handled
	QueueOutbox = "outbox" // replies and notifications that could not be sent
)

// DeadLetterJSON is one dead letter as the REST API and `picoclaw deadletters` show it.
type DeadLetterJSON struct {
	// ID is "<queue>:<entry id>", unique within the gateway; the CLI prefixes the channel.
	ID      string `json:"id"`
	Channel string `json:"channel"`
	Queue   string `json:"queue"`
	// EventID is the inbound event's id (inbox) or the send key (outbox); Key the chat.
	EventID string `json:"event_id"`
	Key     string `json:"key"`
	// Kind, Reason, Attempts: why it died (inbox.DeadPermanent, …), the last error with secrets
	// masked, how many tries.
	Kind     string    `json:"kind"`
	Reason   string    `json:"reason"`
	Attempts int       `json:"attempts"`
	StoredAt time.Time `json:"stored_at"`
	DiedAt   time.Time `json:"died_at"`
	// Text is what the user wrote (inbox) or the first message (outbox), secrets masked.
	Text     string      `json:"text,omitempty"`
	Replayed *ReplayJSON `json:"replayed,omitempty"`
	// Payload is the stored event, secrets masked (shown only for one dead letter).
	Payload string `json:"payload,omitempty"`
}

// ReplayJSON is a dead letter's replay.
type ReplayJSON struct {
	Entry string    `json:"entry"`
	At    time.Time `json:"at"`
	// Already: this replay found the dead letter replayed before and did nothing.
	Already bool `json:"already,omitempty"`
}

// DeadLetterList is the answer of GET /v1/deadletters.
type DeadLetterList struct {
	DeadLetters []DeadLetterJSON `json:"dead_letters"`
	// Next, when set, is the `before` of the next page (only when one queue is listed).
	Next string `json:"next,omitempty"`
}

// deadLetters is a gateway's dead-letter REST API: list, show, replay and drop, for approvers.
type deadLetters struct {
	channel string
	queues  map[string]*inbox.Store
	ch      Channel
	log     *slog.Logger
}

// Register mounts the routes behind the approvers' tokens.
func (a *deadLetters) Register(handle func(method, pattern string, h http.Handler), tokens *bearer.Tokens) {
	refused := func(r *http.Request, fingerprint string) {
		a.log.WarnContext(r.Context(), a.channel+".deadletters_refused", slog.String("token", fingerprint),
			slog.String("request", r.Method+" "+r.URL.Path))
	}
	for _, rt := range []struct {
		method, pattern string
		h               http.HandlerFunc
	}{
		{http.MethodGet, DeadLettersPath, a.list},
		{http.MethodGet, DeadLettersPath + "/{id}", a.show},
		{http.MethodPost, DeadLettersPath + "/{id}/replay", a.replay},
		{http.MethodDelete, DeadLettersPath + "/{id}", a.drop},
	} {
		handle(rt.method, rt.pattern, rpcserver.RequireApprover(tokens, "picoclaw-"+a.channel, refused, rt.h))
	}
}

func (a *deadLetters) list(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	limit := 50
	if v := q.Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n < 1 || n > 500 {
			refuse(w, r, http.StatusBadRequest, "invalid_argument", textLimit, "500")
			return
		}
		limit = n
	}
	queues := []string{QueueInbox, QueueOutbox}
	if v := q.Get("queue"); v != "" {
		if a.queues[v] == nil {
			refuse(w, r, http.StatusBadRequest, "invalid_argument", textQueue)
			return
		}
		queues = []string{v}
	}
	before := q.Get("before")
	if before != "" && len(queues) != 1 {
		refuse(w, r, http.StatusBadRequest, "invalid_argument", textBeforeQueue)
		return
	}
	out := DeadLetterList{DeadLetters: []DeadLetterJSON{}}
	for _, name := range queues {
		dls, err := a.queues[name].ListDead(r.Context(), inbox.DeadQuery{Before: before, Limit: limit})
		if err != nil {
			a.fail(w, r, err)
			return
		}
		for _, dl := range dls {
			out.DeadLetters = append(out.DeadLetters, a.view(name, dl, false))
		}
		if len(queues) == 1 && len(dls) == limit {
			out.Next = dls[len(dls)-1].ID
		}
	}
	slices.SortStableFunc(out.DeadLetters, func(x, y DeadLetterJSON) int { return y.DiedAt.Compare(x.DiedAt) })
	if len(out.DeadLetters) > limit {
		out.DeadLetters = out.DeadLetters[:limit]
	}
	rpcserver.WriteJSON(w, http.StatusOK, out)
}

// target resolves the {id} of a route to its queue and entry id.
func (a *deadLetters) target(w http.ResponseWriter, r *http.Request) (string, *inbox.Store, string, bool) {
	name, id, _ := strings.Cut(chi.URLParam(r, "id"), ":")
	s := a.queues[name]
	if s == nil || id == "" {
		refuse(w, r, http.StatusNotFound, "not_found", textBadID)
		return "", nil, "", false
	}
	return name, s, id, true
}

func (a *deadLetters) show(w http.ResponseWriter, r *http.Request) {
	name, s, id, ok := a.target(w, r)
	if !ok {
		return
	}
	dl, err := s.DeadLetter(r.Context(), id)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	rpcserver.WriteJSON(w, http.StatusOK, a.view(name, dl, true))
}

func (a *deadLetters) replay(w http.ResponseWriter, r *http.Request) {
	name, s, id, ok := a.target(w, r)
	if !ok {
		return
	}
	if name == QueueInbox {
		dl, err := s.DeadLetter(r.Context(), id)
		if err != nil {
			a.fail(w, r, err)
			return
		}
		if decides(dl.Payload) {
			refuse(w, r, http.StatusConflict, "decision_not_replayed", textDecision)
			return
		}
	}
	rep, err := s.Replay(r.Context(), id)
	if err != nil {
		a.fail(w, r, err)
		return
	}
	a.log.InfoContext(r.Context(), a.channel+".deadletter_replayed", slog.String("dead_letter", name+":"+id),
		slog.String("entry", rep.Entry), slog.Bool("already", rep.Already), slog.String("approver", rpcserver.Approver(r.Context())))
	rpcserver.WriteJSON(w, http.StatusOK, ReplayJSON{Entry: rep.Entry, At: rep.At.UTC(), Already: rep.Already})
}

func (a *deadLetters) drop(w http.ResponseWriter, r *http.Request) {
	name, s, id, ok := a.target(w, r)
	if !ok {
		return
	}
	if err := s.Drop(r.Context(), id); err != nil {
		a.fail(w, r, err)
		return
	}
	a.log.InfoContext(r.Context(), a.channel+".deadletter_dropped", slog.String("dead_letter", name+":"+id),
		slog.String("approver", rpcserver.Approver(r.Context())))
	w.WriteHeader(http.StatusNoContent)
}

// fail maps the dead-letter errors to their answers; anything else is the state store being
// unreachable.
func (a *deadLetters) fail(w http.ResponseWriter, r *http.Request, err error) {
	switch {
	case errors.Is(err, inbox.ErrNotFound):
		refuse(w, r, http.StatusNotFound, "not_found", textNotFound)
	case errors.Is(err, inbox.ErrUnsealed):
		refuse(w, r, http.StatusConflict, "unsealed", textUnsealed)
	default:
		a.log.ErrorContext(r.Context(), a.channel+".deadletters_failed", slog.Any("error", err))
		refuse(w, r, http.StatusServiceUnavailable, "unavailable", textStoreDown)
	}
}

// view is the JSON of a dead letter of queue; full adds the stored payload.
func (a *deadLetters) view(queue string, dl inbox.DeadLetter, full bool) DeadLetterJSON {
	v := DeadLetterJSON{ID: queue + ":" + dl.ID, Channel: a.channel, Queue: queue, EventID: dl.EventID, Key: dl.Key,
		Kind: cmp.Or(dl.Kind, "unknown"), Reason: dl.Reason, Attempts: dl.Attempts, StoredAt: dl.StoredAt.UTC(), DiedAt: dl.DiedAt.UTC()}
	if dl.Replayed != nil {
		v.Replayed = &ReplayJSON{Entry: dl.Replayed.Entry, At: dl.Replayed.At.UTC()}
	}
	switch queue {
	case QueueInbox:
		if ev, err := a.ch.Decode(dl.Payload); err == nil {
			v.Text = ev.Text
		}
	case QueueOutbox:
		var o outbound
		if json.Unmarshal(dl.Payload, &o) == nil && len(o.Replies) > 0 {
			v.Text = o.Replies[0].Text
		}
	}
	v.Text = redact.Secrets(v.Text)
	if full {
		v.Payload = redact.Secrets(string(dl.Payload))
	}
	return v
}

// decisionCommands are the typed commands that decide about a job or Auto-Approve.
var decisionCommands = []string{"/approve", "/deny", "/pick", "/cancel", "/auto-approve"}

// decides reports whether a stored inbound event decides something in its sender's name: a
// pressed button or a decision command. Replaying one would act for that person long after
// they did, so it is refused; an undecodable payload counts as deciding (deny unless allowed).
func decides(payload []byte) bool {
	var ev Event
	if json.Unmarshal(payload, &ev) != nil {
		return true
	}
	if ev.Kind == KindAction || ev.Action != nil {
		return true
	}
	word, _, _ := strings.Cut(strings.TrimSpace(strings.ToLower(ev.Text)), " ")
	for _, c := range decisionCommands {
		if word == c || strings.HasPrefix(word, c+"-") {
			return true
		}
	}
	return false
}
