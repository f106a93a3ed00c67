package llm

import (
	"context"
	"errors"
	"testing"
)

// recordingTracker records what Tracked reports.
type recordingTracker struct {
	started []context.Context
	ended   []error
}

func (r *recordingTracker) Track(ctx context.Context) func(error) {
	r.started = append(r.started, ctx)
	return func(err error) { r.ended = append(r.ended, err) }
}

// failingModel answers with err (or an offline answer when nil) and checks that the call
// started before it ran.
type failingModel struct {
	Offline
	err     error
	tracker *recordingTracker
	t       *testing.T
}

func (f failingModel) Chat(ctx context.Context, req Request) (*Response, error) {
	if len(f.tracker.started) != len(f.tracker.ended)+1 {
		f.t.Errorf("model ran outside a tracked call: started %d, ended %d", len(f.tracker.started), len(f.tracker.ended))
	}
	if f.err != nil {
		return nil, f.err
	}
	return f.Offline.Chat(ctx, req)
}

func TestTrackedReportsEveryCall(t *testing.T) {
	type key struct{}
	rec := &recordingTracker{}
	boom := errors.New("provider down")
	ctx := context.WithValue(context.Background(), key{}, "job")
	for _, want := range []error{nil, boom} {
		c := Tracked(failingModel{err: want, tracker: rec, t: t}, rec)
		if _, err := c.Chat(ctx, Request{Messages: []Message{{Role: RoleUser, Content: "x"}}}); !errors.Is(err, want) {
			t.Fatalf("err = %v, want %v", err, want)
		}
		if c.Provider() != ProviderOffline || c.Cloud() {
			t.Error("the wrapper must keep the client's identity")
		}
	}
	if len(rec.started) != 2 || rec.started[0].Value(key{}) != "job" {
		t.Fatalf("started = %v (the call's context must reach the tracker)", rec.started)
	}
	if len(rec.ended) != 2 || rec.ended[0] != nil || !errors.Is(rec.ended[1], boom) {
		t.Fatalf("ended = %v", rec.ended)
	}
}

func TestTrackedPassesNilThrough(t *testing.T) {
	var m Client = NewOffline()
	if Tracked(m, nil) != m {
		t.Error("a nil tracker must leave the client as it is")
	}
	if Tracked(nil, &recordingTracker{}) != nil {
		t.Error("a nil client must stay nil")
	}
}
