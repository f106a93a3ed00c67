package inbox

import (
	"context"
	"encoding/json"
	"fmt"
)

// BuryNew records ev as a dead letter of kind straight away, without queueing it first: for an
// event whose first handling, done before it was stored (a reply sent at once), failed in a way
// retrying cannot fix. It is sealed and deduplicated as Append would (stored reports whether
// it was recorded; false for an event id seen within DedupeTTL), and Replay puts it into the
// stream like any dead letter.
func (s *Store) BuryNew(ctx context.Context, ev Event, kind string, cause error) (stored bool, err error) {
	if ev.ID == "" || ev.Key == "" {
		return false, fmt.Errorf("inbox: bury: id and key are required")
	}
	meta, err := json.Marshal(ev.Meta)
	if err != nil {
		return false, fmt.Errorf("inbox: event %s meta: %w", ev.ID, err)
	}
	e := entry{eventID: ev.ID, key: ev.Key, payload: ev.Payload, meta: string(meta), mac: s.cfg.mac(ev.ID, ev.Key, ev.Payload, meta)}
	stored, err = s.q.buryNew(ctx, e, why(kind, Delivery{Attempt: 1}, cause))
	if err != nil {
		return false, fmt.Errorf("inbox: bury %s: %w", ev.ID, err)
	}
	if stored {
		s.cfg.Metrics.entry(s.cfg.Stream, "dead")
	} else {
		s.cfg.Metrics.event(s.cfg.Stream, "duplicate", 1)
	}
	return stored, nil
}
