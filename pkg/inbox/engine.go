package inbox

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"
)

// Engine is where the queue lives: Redis streams (RedisEngine) or the embedded SQLite state
// database (SQLiteEngine). Store, Consumer and Marks behave the same on either; the contract
// tests run every behaviour against both.
type Engine interface {
	// queue is cfg.Stream and its consumer group cfg.Group (cfg has its defaults).
	queue(cfg Config) queue
	// marks keeps marks named prefix+key for ttl.
	marks(prefix string, ttl time.Duration) marker
}

// queue is one stream with its consumer group, as the Store and the Consumer use it. Entry ids
// are "<ms>-<seq>": the milliseconds of the append first, then a number that grows with every
// append, so ids compare in append order (compareIDs) and tell the entry's age (entryAge).
type queue interface {
	// append stores each entry whose event id was not seen within DedupeTTL and remembers the
	// id, both in one step; an entry's result has an empty id for a duplicate.
	append(ctx context.Context, entries []entry) []appended
	ping(ctx context.Context) error
	// dead counts the dead letters.
	dead(ctx context.Context) (int64, error)
	stats(ctx context.Context) (Stats, error)
	// ensureGroup creates the group when missing; it starts at the oldest entry.
	ensureGroup(ctx context.Context) error
	// readNew hands up to count entries never delivered to the group to consumer, waiting up
	// to block for one; none is not an error. errNoGroup when the group is missing.
	readNew(ctx context.Context, consumer string, count int64, block time.Duration) ([]entry, error)
	// readOwn re-reads consumer's pending entries after the entry id after ("0": from the start).
	readOwn(ctx context.Context, consumer, after string, count int64) ([]entry, error)
	// claimIdle moves pending entries idle for minIdle or longer, from the entry id start on, to
	// consumer; next is where to go on ("" when done).
	claimIdle(ctx context.Context, consumer string, minIdle time.Duration, start string, count int64) (claimed []entry, next string, err error)
	// touch resets the idle time of consumer's pending entries ids.
	touch(ctx context.Context, consumer string, ids []string) error
	// ack ends the entry id for the group and forgets it in the order of key ("": not known, as
	// for an entry trimmed away while pending), in one step (order.go). With next, a later entry
	// of key that consumer holds, it also answers next's turn as turn would right after the ack
	// (turnUnknown when it was not asked or could not tell); only the ack itself can fail it.
	ack(ctx context.Context, consumer, key, id, next string) (turn, error)
	// bury moves the delivery to the dead letters (meta as stored, why it died), acknowledges it
	// and forgets it in its key's order, in one step.
	bury(ctx context.Context, d Delivery, meta []byte, why deadWhy) error
	// deadList returns up to count dead letters older than before ("" = the newest), newest first.
	deadList(ctx context.Context, before string, count int64) ([]DeadLetter, error)
	// deadGet returns the dead letter id; false when there is none.
	deadGet(ctx context.Context, id string) (DeadLetter, bool, error)
	// deadReplay appends e (the dead letter id's event) to the stream and marks the dead letter
	// replayed, in one step; a dead letter marked already is returned as it is (Already), not
	// appended again. found is false when there is no dead letter id.
	deadReplay(ctx context.Context, id string, e entry) (r Replay, found bool, err error)
	// deadDrop deletes the dead letter id; false when there was none.
	deadDrop(ctx context.Context, id string) (bool, error)
	// turn says whether consumer may handle the entry id of key now (order.go).
	turn(ctx context.Context, consumer, key, id string) (turn, error)
	// buryNew adds e as a dead letter without queueing it, remembering its event id, in one
	// step; false when the id was seen within DedupeTTL (nothing recorded).
	buryNew(ctx context.Context, e entry, why deadWhy) (bool, error)
	// outstanding reports whether key has entries not yet acknowledged or buried; it may say so
	// for a while after the last one ended (never the other way round).
	outstanding(ctx context.Context, key string) (bool, error)
	// prune removes consumers of the group idle for idle or longer with nothing pending.
	prune(ctx context.Context, idle time.Duration) (int, error)
}

// marker keeps the sent marks.
type marker interface {
	done(ctx context.Context, key string) (bool, error)
	mark(ctx context.Context, key string) error
}

// entry is one stream entry as an engine stores it.
type entry struct {
	// id is the stream entry id (empty when appending).
	id      string
	eventID string
	key     string
	payload []byte
	// meta is the JSON of Event.Meta, mac its seal, both as stored.
	meta string
	mac  string
	// gone: the entry was trimmed away while pending; nothing is left to process.
	gone bool
	// goAtDelivery: the engine knew the entry's turn as it delivered it, and it was go (the
	// entry is the consumer's and no earlier entry of its key is pending). When the engine
	// cannot tell it is false: the consumer asks (order.go).
	goAtDelivery bool
}

// appended is what append did with one entry: id is empty for a duplicate or a failure (err).
type appended struct {
	id  string
	err error
}

// failAll is the result of an append that failed as a whole.
func failAll(n int, err error) []appended {
	res := make([]appended, n)
	for i := range res {
		res[i].err = err
	}
	return res
}

// errNoGroup: the consumer group does not exist (any more).
var errNoGroup = errors.New("inbox: consumer group missing")

// Stats is the state of a stream and its consumer group.
type Stats struct {
	// Length is the number of entries held. Redis keeps acknowledged entries until MaxLen trims
	// them; SQLite deletes an entry once every group acknowledged it.
	Length int64
	// Group reports whether the consumer group exists; Lag and Pending describe it.
	Group bool
	// Lag is the number of entries not yet delivered to the group (-1 when Redis cannot tell).
	Lag int64
	// Pending is the number of entries delivered to the group and not yet acknowledged.
	Pending int64
}

// delivery is what a Consumer hands the handler for e.
func (e entry) delivery(redelivered bool) Delivery {
	d := Delivery{
		StreamID:    e.id,
		Redelivered: redelivered,
		Event:       Event{ID: e.eventID, Key: e.key, Payload: e.payload},
		rawMeta:     e.meta,
		mac:         e.mac,
	}
	if e.meta != "" && e.meta != "null" {
		_ = json.Unmarshal([]byte(e.meta), &d.Meta)
	}
	return d
}

// streamID formats an entry id.
func streamID(ms, seq int64) string { return fmt.Sprintf("%d-%d", ms, seq) }
