package llm

import "context"

// Tracker follows the calls of a client: heartbeat's agents implement it (the agent is busy
// with the call's JobID while the model works, and a provider error becomes its last error).
// The interface lives here so that the tracker's package need not import this one.
type Tracker interface {
	// Track is told that a call starts under ctx; the returned func is called once with the
	// call's error (nil on success) when it ends.
	Track(ctx context.Context) (done func(err error))
}

// Tracked makes every Chat of c a call reported to t. A nil c or t leaves c as it is.
func Tracked(c Client, t Tracker) Client {
	if c == nil || t == nil {
		return c
	}
	return &trackedClient{Client: c, tracker: t}
}

type trackedClient struct {
	Client
	tracker Tracker
}

func (t *trackedClient) Chat(ctx context.Context, req Request) (*Response, error) {
	done := t.tracker.Track(ctx)
	res, err := t.Client.Chat(ctx, req)
	done(err)
	return res, err
}
