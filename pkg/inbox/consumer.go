package inbox

import (
	"context"
	"crypto/hmac"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/picoclaw-suite/picoclaw/pkg/deepstack"
	"github.com/picoclaw-suite/picoclaw/pkg/runner"
)

// Delivery is one event handed to the Handler.
type Delivery struct {
	Event
	// StreamID is the stream entry id; entries of one key are handled in StreamID order.
	StreamID string
	// Redelivered is true when the entry had been delivered before: read back from this
	// consumer's pending list after a restart, or reclaimed from a consumer that stopped.
	// Whatever the first delivery did may have happened (or not).
	Redelivered bool
	// Attempt counts this process's attempts at the entry, from 1.
	Attempt int

	rawMeta string
	mac     string
}

// Handler processes one event. A nil error acknowledges the entry. An error wrapped with
// Permanent is not retried.
type Handler func(ctx context.Context, d Delivery) error

type permanentError struct{ err error }

func (e permanentError) Error() string { return e.err.Error() }
func (e permanentError) Unwrap() error { return e.err }

// Permanent marks err as not worth retrying.
func Permanent(err error) error {
	if err == nil {
		return nil
	}
	return permanentError{err: err}
}

// IsPermanent reports whether err was marked with Permanent.
func IsPermanent(err error) bool {
	var p permanentError
	return errors.As(err, &p)
}

// ConsumerConfig tunes a Consumer.
type ConsumerConfig struct {
	// Name identifies this consumer in the group and must differ between the replicas that
	// share it (DefaultConsumerName). A stable name (e.g. a StatefulSet pod's) lets a restarted
	// process pick up its own pending entries at once; otherwise they are reclaimed after
	// ClaimIdle.
	Name string
	// Concurrency bounds how many keys (chats) are processed at the same time (default
	// DefaultConcurrency).
	Concurrency int
	// Batch is how many entries one read returns at most (default 32).
	Batch int64
	// MaxInFlight bounds entries read but not yet finished (default 256).
	MaxInFlight int
	// Block is how long one read waits for new entries (default 2 s).
	Block time.Duration
	// ClaimIdle: entries of other consumers idle for longer are reclaimed (default 60 s). Entries
	// this consumer is working on are kept fresh, so a slow reply is never taken over.
	ClaimIdle time.Duration
	// MaxAge bounds how long a transiently failing entry is retried, counted from when it was
	// stored (default 24 h): a dependency that is down delays an answer, it does not lose it.
	// A permanent failure (Permanent) goes to the dead-letter stream at once.
	MaxAge time.Duration
	// MaxAttempts, when positive, also bounds the attempts (default 0: only MaxAge).
	MaxAttempts int
	// Backoff is the first retry delay, doubled per attempt up to MaxBackoff (defaults 500 ms, 30 s).
	Backoff    time.Duration
	MaxBackoff time.Duration
	// TurnPoll is how often an entry looks again whose chat has an earlier entry pending with
	// another consumer (default 20 ms; see order.go).
	TurnPoll time.Duration
	// GiveUp, when set, is called before an entry goes to the dead-letter stream (e.g. to tell
	// the user that their message could not be handled).
	GiveUp func(ctx context.Context, d Delivery, err error)
	Logger *slog.Logger
}

func (c *ConsumerConfig) defaults() {
	if c.Concurrency <= 0 {
		c.Concurrency = DefaultConcurrency
	}
	if c.Batch <= 0 {
		c.Batch = 32
	}
	if c.MaxInFlight <= 0 {
		c.MaxInFlight = 256
	}
	if c.MaxInFlight < int(c.Batch) {
		c.MaxInFlight = int(c.Batch)
	}
	if c.Block <= 0 {
		c.Block = 2 * time.Second
	}
	if c.ClaimIdle <= 0 {
		c.ClaimIdle = 60 * time.Second
	}
	if c.MaxAge <= 0 {
		c.MaxAge = 24 * time.Hour
	}
	if c.Backoff <= 0 {
		c.Backoff = 500 * time.Millisecond
	}
	if c.TurnPoll <= 0 {
		c.TurnPoll = 20 * time.Millisecond
	}
	if c.MaxBackoff < c.Backoff {
		c.MaxBackoff = max(30*time.Second, c.Backoff)
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
}

// Consumer reads the stream as one member of the consumer group.
type Consumer struct {
	q       queue
	cfg     Config
	ccfg    ConsumerConfig
	handler Handler
	log     *slog.Logger

	mu       sync.Mutex
	lanes    map[string]*lane
	inflight map[string]struct{}
	freed    chan struct{}
	slots    chan struct{}
	// wake is closed (and replaced) when the engine answers again after failing reads: entries
	// waiting out a backoff are retried at once instead of at the end of it.
	wake chan struct{}
}

type lane struct {
	queue []Delivery
	// known is the turn of the entry knownID, answered with the ack of the entry before it or
	// with its delivery (entry.goAtDelivery); it holds for the lane's next look at its head only
	// (awaitTurn).
	knownID string
	known   turn
}

// NewConsumerOn returns a consumer of cfg.Stream on the engine e; Run starts it.
func NewConsumerOn(e Engine, cfg Config, ccfg ConsumerConfig, h Handler) (*Consumer, error) {
	if err := cfg.validate(); err != nil {
		return nil, err
	}
	if ccfg.Name == "" {
		return nil, errors.New("inbox: consumer name is required")
	}
	if h == nil {
		return nil, errors.New("inbox: handler is required")
	}
	cfg.defaults()
	ccfg.defaults()
	q := e.queue(cfg)
	cfg.Metrics.watch(q, cfg.Stream, cfg.Group)
	return &Consumer{
		q: q, cfg: cfg, ccfg: ccfg, handler: h, log: ccfg.Logger,
		lanes:    map[string]*lane{},
		inflight: map[string]struct{}{},
		freed:    make(chan struct{}, 1),
		wake:     make(chan struct{}),
		slots:    make(chan struct{}, ccfg.Concurrency),
	}, nil
}

// EnsureGroup creates the stream and the consumer group when missing.
func (c *Consumer) EnsureGroup(ctx context.Context) error {
	if err := c.q.ensureGroup(ctx); err != nil {
		return fmt.Errorf("inbox: create group %s on %s: %w", c.cfg.Group, c.cfg.Stream, err)
	}
	return nil
}

// Run processes the stream until ctx ends. Entries still being handled when ctx ends are left
// pending (not acknowledged), so the next start picks them up again.
func (c *Consumer) Run(ctx context.Context) error {
	if err := c.EnsureGroup(ctx); err != nil {
		if ctx.Err() != nil {
			return nil // stopped while starting
		}
		return err
	}
	var wg sync.WaitGroup
	defer wg.Wait()
	wg.Go(func() { c.keepAlive(ctx) })

	// This consumer's own pending entries first: they are older than anything new.
	if err := c.recoverOwn(ctx, &wg); err != nil && ctx.Err() == nil {
		return err
	}
	var lastClaim, lastPrune time.Time
	failures := 0
	for ctx.Err() == nil {
		if time.Since(lastClaim) >= c.ccfg.ClaimIdle/2 {
			if err := c.reclaim(ctx, &wg); err != nil && ctx.Err() == nil {
				c.log.WarnContext(ctx, "inbox.reclaim_failed", slog.String("stream", c.cfg.Stream), slog.Any("error", err))
			}
			if time.Since(lastPrune) >= pruneIdle/24 {
				c.prune(ctx)
				lastPrune = time.Now()
			}
			lastClaim = time.Now()
		}
		if !c.waitCapacity(ctx) {
			break
		}
		entries, err := c.q.readNew(ctx, c.ccfg.Name, c.ccfg.Batch, c.ccfg.Block)
		if err != nil {
			if ctx.Err() != nil {
				break
			}
			if errors.Is(err, errNoGroup) {
				if gerr := c.EnsureGroup(ctx); gerr != nil {
					c.log.WarnContext(ctx, "inbox.group_failed", slog.Any("error", gerr))
				}
			}
			failures++
			c.log.WarnContext(ctx, "inbox.read_failed", slog.String("stream", c.cfg.Stream), slog.Any("error", err))
			if !sleep(ctx, backoff(c.ccfg.Backoff, c.ccfg.MaxBackoff, failures)) {
				break
			}
			continue
		}
		if failures > 0 {
			c.recovered()
		}
		failures = 0
		for _, e := range entries {
			c.dispatch(ctx, &wg, e, false)
		}
	}
	return nil
}

// recoverOwn re-reads the entries this consumer name had read but not acknowledged.
func (c *Consumer) recoverOwn(ctx context.Context, wg *sync.WaitGroup) error {
	last := "0"
	for ctx.Err() == nil {
		entries, err := c.q.readOwn(ctx, c.ccfg.Name, last, c.ccfg.Batch)
		if err != nil {
			return fmt.Errorf("inbox: read pending: %w", err)
		}
		if len(entries) == 0 {
			return nil
		}
		for _, e := range entries {
			last = e.id
			if e.gone {
				// Trimmed away while pending: nothing left to process.
				c.ack(ctx, Delivery{StreamID: e.id}, nil)
				continue
			}
			c.dispatch(ctx, wg, e, true)
		}
		c.log.InfoContext(ctx, "inbox.recovered", slog.String("stream", c.cfg.Stream), slog.Int("entries", len(entries)))
		if !c.waitCapacity(ctx) {
			return nil
		}
	}
	return nil
}

// reclaim takes over entries that other consumers left pending for longer than ClaimIdle.
func (c *Consumer) reclaim(ctx context.Context, wg *sync.WaitGroup) error {
	start := ""
	for round := 0; round < 16 && ctx.Err() == nil; round++ {
		claimed, next, err := c.q.claimIdle(ctx, c.ccfg.Name, c.ccfg.ClaimIdle, start, c.ccfg.Batch)
		if err != nil {
			return err
		}
		for _, e := range claimed {
			c.log.InfoContext(ctx, "inbox.reclaimed", slog.String("stream", c.cfg.Stream), slog.String("entry", e.id))
			c.cfg.Metrics.entry(c.cfg.Stream, "reclaimed")
			c.dispatch(ctx, wg, e, true)
		}
		if next == "" {
			return nil
		}
		start = next
	}
	return nil
}

// keepAlive resets the idle time of entries in progress so no other consumer reclaims them.
func (c *Consumer) keepAlive(ctx context.Context) {
	runner.Every(ctx, max(c.ccfg.ClaimIdle/3, 10*time.Millisecond), func() {
		c.mu.Lock()
		ids := make([]string, 0, len(c.inflight))
		for id := range c.inflight {
			ids = append(ids, id)
		}
		c.mu.Unlock()
		if len(ids) == 0 {
			return
		}
		if err := c.q.touch(ctx, c.ccfg.Name, ids); err != nil && ctx.Err() == nil {
			c.log.WarnContext(ctx, "inbox.keepalive_failed", slog.Any("error", err))
		}
	})
}

func (c *Consumer) waitCapacity(ctx context.Context) bool {
	for {
		c.mu.Lock()
		n := len(c.inflight)
		c.mu.Unlock()
		if n+int(c.ccfg.Batch) <= c.ccfg.MaxInFlight {
			return true
		}
		select {
		case <-ctx.Done():
			return false
		case <-c.freed:
		}
	}
}

func (c *Consumer) dispatch(ctx context.Context, wg *sync.WaitGroup, e entry, redelivered bool) {
	d := e.delivery(redelivered)
	c.mu.Lock()
	defer c.mu.Unlock()
	if _, busy := c.inflight[d.StreamID]; busy {
		return
	}
	c.inflight[d.StreamID] = struct{}{}
	l, running := c.lanes[d.Key]
	if !running {
		l = &lane{}
		c.lanes[d.Key] = l
	}
	// An entry delivered with its turn (go) into an empty lane is the lane's next look: the
	// answer stands for it as an ack's does (order.go).
	if e.goAtDelivery && len(l.queue) == 0 && l.knownID == "" {
		l.knownID, l.known = d.StreamID, turnGo
	}
	// Keep the lane sorted: a reclaimed older entry goes before newer ones of the same chat.
	i, _ := slices.BinarySearchFunc(l.queue, d.StreamID, func(q Delivery, id string) int {
		return compareIDs(q.StreamID, id)
	})
	l.queue = slices.Insert(l.queue, i, d)
	if !running {
		wg.Go(func() { c.runLane(ctx, d.Key, l) })
	}
}

// runLane handles the key's entries one after another. Each waits for its turn (order.go)
// before it takes one of the Concurrency slots, so a lane waiting for another consumer never
// holds a slot.
func (c *Consumer) runLane(ctx context.Context, key string, l *lane) {
	for {
		d, ok := c.awaitTurn(ctx, l)
		if !ok {
			c.mu.Lock()
			if len(l.queue) == 0 || ctx.Err() != nil {
				// Entries left when stopping stay pending for the next start.
				for _, q := range l.queue {
					delete(c.inflight, q.StreamID)
				}
				l.queue = nil
				delete(c.lanes, key)
				c.mu.Unlock()
				return
			}
			c.mu.Unlock()
			continue
		}
		select {
		case c.slots <- struct{}{}:
			if ctx.Err() == nil {
				deepstack.Reserve()
				c.process(ctx, l, d)
			}
			<-c.slots
		case <-ctx.Done():
		}
		c.finished(d.StreamID)
	}
}

// process handles d, the entry just taken from the head of lane l, until it is acknowledged or
// buried (or the consumer stops).
func (c *Consumer) process(ctx context.Context, l *lane, d Delivery) {
	if want := c.cfg.mac(d.ID, d.Key, d.Payload, []byte(d.rawMeta)); !hmac.Equal([]byte(want), []byte(d.mac)) {
		// Not written by this gateway: never handled (nobody gets vouched for), kept for a look.
		c.log.ErrorContext(ctx, "inbox.entry_forged", slog.String("stream", c.cfg.Stream), slog.String("entry", d.StreamID))
		c.bury(ctx, d, why(DeadForged, d, errors.New("entry without a valid seal")))
		c.cfg.Metrics.entry(c.cfg.Stream, "dead")
		return
	}
	if !d.Redelivered {
		c.cfg.Metrics.waited(c.cfg.Stream, d.StreamID, time.Now())
	}
	for attempt := 1; ; attempt++ {
		d.Attempt = attempt
		err := c.handler(ctx, d)
		if err == nil {
			c.ack(ctx, d, l)
			c.cfg.Metrics.entry(c.cfg.Stream, "acked")
			if attempt > 1 {
				// What was failing works again: the other entries waiting out a backoff (other
				// chats' answers held up by the same outage) are retried now, not at the end of it.
				c.recovered()
			}
			return
		}
		if ctx.Err() != nil {
			// Shutting down: leave it pending for the next start.
			return
		}
		attrs := []any{slog.String("stream", c.cfg.Stream), slog.String("event_id", d.ID),
			slog.Int("attempt", attempt), slog.Any("error", err)}
		kind := ""
		switch {
		case IsPermanent(err):
			kind = DeadPermanent
		case c.ccfg.MaxAttempts > 0 && attempt >= c.ccfg.MaxAttempts:
			kind = DeadAttempts
		case entryAge(d.StreamID) >= c.ccfg.MaxAge:
			kind = DeadExpired
		}
		if kind != "" {
			c.log.ErrorContext(ctx, "inbox.give_up", append(attrs, slog.String("kind", kind))...)
			if c.ccfg.GiveUp != nil {
				c.ccfg.GiveUp(ctx, d, err)
			}
			c.bury(ctx, d, why(kind, d, err))
			c.cfg.Metrics.entry(c.cfg.Stream, "dead")
			return
		}
		c.log.WarnContext(ctx, "inbox.retry", attrs...)
		c.cfg.Metrics.entry(c.cfg.Stream, "retried")
		if !c.sleepOrWake(ctx, backoff(c.ccfg.Backoff, c.ccfg.MaxBackoff, attempt)) {
			return
		}
	}
}

// settleAttempts bounds the tries of an ack (or a move to the dead letters) while the consumer
// shuts down.
const settleAttempts = 3

// ack ends the entry d once its handler succeeded and forgets it in its key's order, in one
// engine call retried until it succeeds (see settle). With the lane l it was taken from, the
// same call answers the turn of the entry now at the lane's head, for the lane's next look.
func (c *Consumer) ack(ctx context.Context, d Delivery, l *lane) {
	next := ""
	if l != nil {
		c.mu.Lock()
		if len(l.queue) > 0 {
			next = l.queue[0].StreamID
		}
		c.mu.Unlock()
	}
	t := turnUnknown
	c.settle(ctx, "ack", d.StreamID, func(ctx context.Context) error {
		r, err := c.q.ack(ctx, c.ccfg.Name, d.Key, d.StreamID, next)
		if err == nil {
			t = r
		}
		return err
	})
	if next != "" && t != turnUnknown {
		c.mu.Lock()
		l.knownID, l.known = next, t
		c.mu.Unlock()
	}
}

// settle runs op, the last step of an entry (its ack, or its move to the dead letters). A failed
// step is tried again — with the consumer's backoff, and at once when the engine answers again —
// until it succeeds: meanwhile the entry stays in flight (kept fresh by keepAlive, never handed
// to the handler again by this consumer), so an answered event is not redelivered and answered
// twice. While shutting down it is tried settleAttempts times; an entry still pending then is
// redelivered at the next start, where the handler's own dedupe (sent marks, the outbox's send
// keys) keeps it from going out twice.
func (c *Consumer) settle(ctx context.Context, step, id string, op func(ctx context.Context) error) {
	for attempt := 1; ; attempt++ {
		actx, cancel := context.WithTimeout(context.WithoutCancel(ctx), 5*time.Second)
		err := op(actx)
		cancel()
		if err == nil {
			if attempt > 1 {
				c.log.InfoContext(ctx, "inbox."+step+"_recovered", slog.String("entry", id), slog.Int("attempts", attempt))
			}
			return
		}
		if ctx.Err() != nil && attempt >= settleAttempts {
			c.log.ErrorContext(ctx, "inbox."+step+"_failed", slog.String("entry", id), slog.Int("attempts", attempt), slog.Any("error", err))
			return
		}
		c.log.WarnContext(ctx, "inbox."+step+"_retry", slog.String("entry", id), slog.Int("attempt", attempt), slog.Any("error", err))
		c.cfg.Metrics.entry(c.cfg.Stream, step+"_retried")
		wait := backoff(c.ccfg.Backoff, c.ccfg.MaxBackoff, attempt)
		if ctx.Err() != nil {
			time.Sleep(min(wait, time.Second))
			continue
		}
		c.sleepOrWake(ctx, wait)
	}
}

// recovered wakes every entry waiting out a backoff.
func (c *Consumer) recovered() {
	c.mu.Lock()
	defer c.mu.Unlock()
	close(c.wake)
	c.wake = make(chan struct{})
}

// sleepOrWake waits d, or less when the engine recovers; false when ctx ends first.
func (c *Consumer) sleepOrWake(ctx context.Context, d time.Duration) bool {
	c.mu.Lock()
	wake := c.wake
	c.mu.Unlock()
	return sleepUntil(ctx, d, wake)
}

// entryAge is how long ago the stream entry was stored (its id starts with the milliseconds).
func entryAge(streamID string) time.Duration {
	ms, _ := splitID(streamID)
	if ms == 0 {
		return 0
	}
	return time.Since(time.UnixMilli(int64(ms)))
}

func (c *Consumer) bury(ctx context.Context, d Delivery, w deadWhy) {
	// The meta exactly as stored: the dead letter keeps the entry's seal valid for a replay.
	meta := []byte(d.rawMeta)
	if len(meta) == 0 {
		meta, _ = json.Marshal(d.Meta)
	}
	c.settle(ctx, "bury", d.StreamID, func(ctx context.Context) error { return c.q.bury(ctx, d, meta, w) })
}

func backoff(base, limit time.Duration, attempt int) time.Duration {
	d := base
	for i := 1; i < attempt && d < limit; i++ {
		d *= 2
	}
	return min(d, limit)
}

func sleep(ctx context.Context, d time.Duration) bool { return sleepUntil(ctx, d, nil) }

// sleepUntil waits d, or until wake closes (a nil wake never does); false when ctx ends first.
func sleepUntil(ctx context.Context, d time.Duration, wake <-chan struct{}) bool {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C:
	case <-wake:
	}
	return true
}

// compareIDs orders stream ids ("ms-seq") numerically.
func compareIDs(a, b string) int {
	am, as := splitID(a)
	bm, bs := splitID(b)
	if am != bm {
		if am < bm {
			return -1
		}
		return 1
	}
	switch {
	case as < bs:
		return -1
	case as > bs:
		return 1
	}
	return 0
}

func splitID(id string) (uint64, uint64) {
	ms, seq, _ := strings.Cut(id, "-")
	m, _ := strconv.ParseUint(ms, 10, 64)
	s, _ := strconv.ParseUint(seq, 10, 64)
	return m, s
}
