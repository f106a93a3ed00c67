package jobid

import (
	"context"
	"sync"
	"time"
)

// Ahead hands out a Daily allocator's ids drawn one ahead of need: Next takes the id drawn
// before (when it is of today) and draws the next one in the background, so a webhook's
// acknowledgement does not wait for the counter, and on an embedded engine the draw shares the
// write transaction of the event it runs beside. An id is still drawn from the shared counter,
// never made up: ids stay unique across services and restarts. What this gives up is
// contiguity: an id drawn and not handed out (the process stops, the day turns) is never used,
// as the number of an event found to be a duplicate is not.
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
	drawing  bool // a background draw is under way
	closed   bool // Wait was called: no draw starts any more
	draws    sync.WaitGroup
}

var _ Allocator = (*Ahead)(nil)

// drawTimeout bounds one background draw.
const drawTimeout = 5 * time.Second

// NewAhead draws d's ids ahead until life ends or Wait is called.
func NewAhead(life context.Context, d *Daily) *Ahead {
	return &Ahead{d: d, life: life}
}

// Next implements Allocator.
func (a *Ahead) Next(ctx context.Context) (string, error) {
	day := a.d.today()
	a.mu.Lock()
	id := ""
	if a.spare != "" && a.spareDay == day {
		id = a.spare
	}
	a.spare, a.spareDay = "", ""
	a.mu.Unlock()
	a.drawAhead()
	if id != "" {
		return id, nil
	}
	return a.d.Next(ctx)
}

// drawAhead starts a background draw unless one is under way or life has ended.
func (a *Ahead) drawAhead() {
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.drawing || a.closed || a.life.Err() != nil {
		return
	}
	a.drawing = true
	a.draws.Go(func() {
		ctx, cancel := context.WithTimeout(a.life, drawTimeout)
		day := a.d.today()
		id, err := a.d.counted(ctx, day)
		cancel()
		a.mu.Lock()
		defer a.mu.Unlock()
		a.drawing = false
		// A spare already there (none is, as only Next takes it and only this draw fills it)
		// would be overwritten; an error leaves none.
		if err == nil {
			a.spare, a.spareDay = id, day
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
