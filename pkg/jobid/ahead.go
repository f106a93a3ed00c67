package jobid

import (
	"context"
	"sync"
	"time"

	"go.opentelemetry.io/otel/trace"
)

// Ahead hands out a Daily allocator's ids drawn one ahead of need: Next takes the id drawn
// before (when it is of today and at most MaxSpareAge old) and draws the next one in the
// background, so a webhook's acknowledgement usually does not wait for the counter, and on an
// embedded engine the draw usually joins the write batch of the event it runs beside. An id is
// still drawn from the shared counter, never made up: ids stay unique across services and
// restarts. What this gives up is contiguity: an id drawn and not handed out (the process stops,
// the day turns, it grows too old) is never used, as the number of an event found to be a
// duplicate is not.
//
// The fallback form is never drawn ahead: a draw that cannot reach the counter leaves nothing,
// and the next Next draws in the foreground (and falls back there, saying so in the log).
type Ahead struct {
	d *Daily
	// life bounds the background draws; they end when it does.
	life context.Context

	mu       sync.Mutex
	spare    string // the id drawn ahead, "" when there is none
	spareDay string
	spareAt  time.Time // when it was drawn
	drawing  bool      // a background draw is under way
	closed   bool      // Wait was called: no draw starts any more
	draws    sync.WaitGroup
}

var _ Allocator = (*Ahead)(nil)

// drawTimeout bounds one background draw.
const drawTimeout = 5 * time.Second

// MaxSpareAge is how long an id drawn ahead may wait to be handed out. The audit floor that
// reseeds a lost counter (WithFloor) knows only the ids that reached a job; an id held in memory
// longer than an event takes through the inbox could be drawn again by another service after
// such a loss, so an older one is dropped (a gap) and the next is drawn in the foreground.
const MaxSpareAge = 30 * time.Second

// NewAhead draws d's ids ahead until life ends or Wait is called.
func NewAhead(life context.Context, d *Daily) *Ahead {
	return &Ahead{d: d, life: life}
}

// Next implements Allocator. Without an id drawn ahead (the first call, a new day, a spare
// too old, a background draw that failed or has not ended) it draws in the foreground first and
// only then ahead, so the id it returns comes before the one it holds.
func (a *Ahead) Next(ctx context.Context) (string, error) {
	day, now := a.d.today(), a.d.now()
	a.mu.Lock()
	id := ""
	if a.spare != "" && a.spareDay == day && now.Sub(a.spareAt) <= MaxSpareAge {
		id = a.spare
	}
	a.spare, a.spareDay = "", ""
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

// drawAhead starts a background draw unless an id is held, one is under way or life has ended.
// The draw's spans (the engine's command) join the trace of the request that asked for it.
func (a *Ahead) drawAhead(parent trace.SpanContext) {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.spare != "" || a.drawing || a.closed || a.life.Err() != nil {
		return
	}
	a.drawing = true
	a.draws.Go(func() {
		ctx, cancel := context.WithTimeout(trace.ContextWithSpanContext(a.life, parent), drawTimeout)
		day := a.d.today()
		id, err := a.d.counted(ctx, day)
		cancel()
		a.mu.Lock()
		defer a.mu.Unlock()
		a.drawing = false
		if err == nil { // an error leaves none: the next Next draws in the foreground
			a.spare, a.spareDay, a.spareAt = id, day, a.d.now()
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
