package inbox

import (
	"context"
	"log/slog"
	"time"
)

// Per-key order across consumers.
//
// Within one consumer a key's entries run one after another in a lane. Several consumers of a
// group (replicas of a gateway) each read whatever entries come next, so one chat's burst is
// split between them; each entry therefore waits for its turn before it is handled:
//
//   - fencing: the entry is still pending with this consumer. An entry another consumer took over
//     (XAUTOCLAIM after ClaimIdle, or the SQLite equivalent) is dropped from the lane unhandled;
//     its new holder handles it.
//   - order: no earlier entry of the same key is pending in the group, with any consumer. The
//     holder of a chat's oldest outstanding entry is the chat's one owner at that moment; the
//     others wait (without taking a processing slot) until it is acknowledged or buried.
//
// Entries are delivered to the group in stream order, so an earlier entry of the key than one
// a consumer holds has been delivered too: it is pending (someone works on it, or a crashed
// consumer left it, and it is reclaimed after ClaimIdle) or done. Nobody can wait for an entry
// nobody holds, and the holder of the oldest entry of a key never waits, so there is no
// deadlock.
//
// Redis keeps each key's outstanding entry ids in a list (<stream>:order:<key>), appended in the
// same script step as the entry and removed in the same step as its ack (or its move to the dead
// letters); ids found at the head that are no longer pending (acknowledged by an older build,
// trimmed) are dropped when met. SQLite reads the same facts from its pending table.
//
// The first turn of most entries needs no call of its own: an entry appended while its key has
// nothing outstanding has no earlier entry to wait for, then or later (an earlier entry settles
// before its id leaves the order). Redis marks such an entry as it appends it, SQLite reads it as
// it delivers, and the consumer takes the entry's first delivery (read as new, so it is the
// consumer's) as its turn (entry.goAtDelivery).
//
// The ack of an entry also answers the turn of the lane's next entry (same key, same consumer),
// so a chat's run of messages costs one engine call per entry after the first. That answer is
// what a turn right after the ack would say; it is used for the lane's very next look only, and
// only when that entry is still the lane's head (a reclaimed older entry may have gone first).

// turn is what a consumer may do with an entry now.
type turn int

const (
	// turnGo: handle it now.
	turnGo turn = iota
	// turnWait: an earlier entry of its key is pending in the group; look again later.
	turnWait
	// turnLost: it is no longer pending with this consumer (another one took it over, or it
	// was acknowledged); drop it unhandled.
	turnLost
	// turnUnknown: not asked, or the engine could not tell (an ack's answer for the next entry).
	turnUnknown
)

// turnOf reads an engine's answer: 0 go, 1 wait, 2 lost, anything else unknown.
func turnOf(n int) turn {
	switch n {
	case 0:
		return turnGo
	case 1:
		return turnWait
	case 2:
		return turnLost
	}
	return turnUnknown
}

// orderTTL bounds how long a key's order record lives after its last append: it is removed
// entry by entry as they settle, so this only collects what a crash left behind.
const orderTTL = 7 * 24 * time.Hour

// awaitTurn waits until the head of the lane may be handled and returns it, dropping entries
// this consumer lost on the way; false when the lane is empty or ctx ended.
func (c *Consumer) awaitTurn(ctx context.Context, l *lane) (Delivery, bool) {
	waits := 0
	for ctx.Err() == nil {
		c.mu.Lock()
		if len(l.queue) == 0 {
			c.mu.Unlock()
			return Delivery{}, false
		}
		// The head can change while this lane waits (a reclaimed older entry goes first).
		d := l.queue[0]
		t, known := l.known, l.knownID == d.StreamID
		l.knownID = ""
		c.mu.Unlock()
		if !known {
			var err error
			if t, err = c.q.turn(ctx, c.ccfg.Name, d.Key, d.StreamID); err != nil {
				if ctx.Err() != nil {
					break
				}
				c.log.WarnContext(ctx, "inbox.turn_failed", slog.String("stream", c.cfg.Stream), slog.String("entry", d.StreamID), slog.Any("error", err))
				t = turnWait
			}
		}
		switch t {
		case turnGo:
			if c.pop(l, d.StreamID) {
				return d, true
			}
		case turnLost:
			c.log.InfoContext(ctx, "inbox.taken_over", slog.String("stream", c.cfg.Stream), slog.String("entry", d.StreamID))
			c.cfg.Metrics.entry(c.cfg.Stream, "taken_over")
			if c.pop(l, d.StreamID) {
				c.finished(d.StreamID)
			}
		default:
			if waits == 0 {
				c.cfg.Metrics.entry(c.cfg.Stream, "waited_turn")
			}
			waits++
			if !sleep(ctx, c.ccfg.TurnPoll) {
				return Delivery{}, false
			}
		}
	}
	return Delivery{}, false
}

// pop removes the entry id from the lane's head; false when it is not the head any more.
func (c *Consumer) pop(l *lane, id string) bool {
	c.mu.Lock()
	defer c.mu.Unlock()
	if len(l.queue) == 0 || l.queue[0].StreamID != id {
		return false
	}
	l.queue = l.queue[1:]
	return true
}

// finished lets go of an entry this consumer no longer holds in hand.
func (c *Consumer) finished(id string) {
	c.mu.Lock()
	delete(c.inflight, id)
	c.mu.Unlock()
	select {
	case c.freed <- struct{}{}:
	default:
	}
}

// pruneIdle is how long a consumer name with nothing pending stays registered in the group:
// names are unique per process start, so the names of stopped processes are removed.
const pruneIdle = 24 * time.Hour

// prune removes the group's consumers that stopped long ago (logged, never fatal).
func (c *Consumer) prune(ctx context.Context) {
	n, err := c.q.prune(ctx, pruneIdle)
	if err != nil {
		if ctx.Err() == nil {
			c.log.WarnContext(ctx, "inbox.prune_failed", slog.String("stream", c.cfg.Stream), slog.Any("error", err))
		}
		return
	}
	if n > 0 {
		c.log.InfoContext(ctx, "inbox.consumers_pruned", slog.String("stream", c.cfg.Stream), slog.Int("consumers", n))
	}
}
