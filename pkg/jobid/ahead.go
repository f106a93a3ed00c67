package jobid

import (
	"context"
	"sync"
	"time"

	"go.opentelemetry.io/otel/trace"
)

// Ahead hands out a Daily allocator's ids drawn ahead of need: Next takes an id drawn before
// (when it is of today and at most MaxSpareAge old) and, once those are used up, draws the next
// ones in the background, so a webhook's acknowledgement usually does not wait for the counter,
// and on an embedded engine the draw usually joins the write batch of the event it runs beside.
// Under load the ids are drawn in blocks, one trip to the counter for up to MaxBlock ids: a
// block used up within BlockFill of its draw makes the next one twice as large, one used up
// more slowly half as large, and one left unused (too old, the day turned) one id again. An id is still drawn from the shared
// counter, never made up: ids stay unique across services and restarts. What this gives up is
// contiguity and, across services, the order of the numbers: an id drawn and not handed out
// (the process stops, the day turns, it grows too old) is never used, as the number of an event
// found to be a duplicate is not, and another service may hand out a higher number first.
//
// The fallback form is never drawn ahead: a draw that cannot reach the counter leaves nothing,
// and the next Next draws in the foreground (and falls back there, saying so in the log).
type Ahead struct {
	d *Daily
	// life bounds the background draws; they end when it does.
	life context.Context

	mu sync.Mutex
	// next … last are the numbers of spareDay drawn ahead and not handed out (none when next >
	// last), drawn at spareAt.
	next, last int64
	spareDay   string
	spareAt    time.Time
	size       int64 // how many numbers the next background draw takes
	drawing    bool  // a background draw is under way
	closed     bool  // Wait was called: no draw starts any more
	draws      sync.WaitGroup
}

var _ Allocator = (*Ahead)(nil)

// drawTimeout bounds one background draw.
const drawTimeout = 5 * time.Second

// MaxSpareAge is how long an id drawn ahead may wait to be handed out. The audit floor that
// reseeds a lost counter (WithFloor) knows only the ids that reached a job; an id held in memory
// could be drawn again by another service after such a loss (a lost counter already gives the
// ids of plain messages again; what must not recur is the id of a job), so the window in which
// a held block can meet a reseeded counter is bounded: an older id is dropped (a gap) and the
// next is drawn in the foreground.
const MaxSpareAge = 30 * time.Second

// MaxBlock is the most ids one background draw takes; BlockFill is how soon a block must be used
// up for the next to be larger.
const (
	MaxBlock  = 16
	BlockFill = time.Second
)

// NewAhead draws d's ids ahead until life ends or Wait is called.
func NewAhead(life context.Context, d *Daily) *Ahead {
	return &Ahead{d: d, life: life, next: 1, size: 1}
}

// Next implements Allocator. Without an id drawn ahead (the first call, a new day, a spare
// too old, a background draw that failed or has not ended) it draws in the foreground first and
// only then ahead. A foreground draw while a background draw is under way may take a higher
// number than the block that draw brings: the ids of one process need not come in order.
func (a *Ahead) Next(ctx context.Context) (string, error) {
	day, now := a.d.today(), a.d.now()
	a.mu.Lock()
	id := ""
	if a.next <= a.last {
		if a.spareDay == day && now.Sub(a.spareAt) <= MaxSpareAge {
			id = format(day, a.next)
			a.next++
			if a.next > a.last {
				if now.Sub(a.spareAt) < BlockFill {
					a.size = min(2*a.size, MaxBlock)
				} else {
					a.size = max(a.size/2, 1)
				}
			}
		} else {
			a.next, a.last, a.size = 1, 0, 1 // dropped unused: the next block is one id
		}
	}
	a.mu.Unlock()
	if id == "" {
		var err error
		if id, err = a.d.Next(ctx); err != nil {
			return "", err
		}
	}
	a.drawAhead(trace.SpanContextFromContext(ctx))
	return id, nil
}

// drawAhead starts a background draw unless ids are held, one is under way or life has ended.
// The draw's spans (the engine's command) join the trace of the request that asked for it.
func (a *Ahead) drawAhead(parent trace.SpanContext) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.next <= a.last || a.drawing || a.closed || a.life.Err() != nil {
		return
	}
	a.drawing = true
	size := a.size
	a.draws.Go(func() {
		ctx, cancel := context.WithTimeout(trace.ContextWithSpanContext(a.life, parent), drawTimeout)
		day := a.d.today()
		last, err := a.d.incr(ctx, day, size)
		cancel()
		a.mu.Lock()
		defer a.mu.Unlock()
		a.drawing = false
		if err == nil { // an error leaves none: the next Next draws in the foreground
			a.next, a.last, a.spareDay, a.spareAt = last-size+1, last, day, a.d.now()
		}
	})
}

// Wait waits for the background draw under way, if any; none starts after it. Next still
// works, drawing in the foreground.
func (a *Ahead) Wait() {
	a.mu.Lock()
	a.closed = true
	a.mu.Unlock()
	a.draws.Wait()
}
