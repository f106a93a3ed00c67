package ollama

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/picoclaw-suite/picoclaw/pkg/llm"
	"github.com/picoclaw-suite/picoclaw/pkg/llm/internal/llmtest"
)

// heldServer answers /api/chat; the first held requests wait until release is closed. It
// records how many requests it had under way at most.
type heldServer struct {
	held    int64
	release chan struct{}
	arrived chan struct{}
	seen    atomic.Int64
	now     atomic.Int64
	most    atomic.Int64
}

func (h *heldServer) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	_, _ = io.Copy(io.Discard, r.Body)
	n := h.now.Add(1)
	defer h.now.Add(-1)
	for m := h.most.Load(); n > m && !h.most.CompareAndSwap(m, n); m = h.most.Load() {
	}
	if h.seen.Add(1) <= h.held {
		h.arrived <- struct{}{}
		<-h.release
	}
	w.Header().Set("Content-Type", "application/json")
	_, _ = io.WriteString(w, llmtest.OllamaOK)
}

func TestMaxParallelBoundsCallsAtTheModel(t *testing.T) {
	h := &heldServer{held: 2, release: make(chan struct{}), arrived: make(chan struct{}, 2)}
	srv := httptest.NewServer(h)
	defer srv.Close()
	release := sync.OnceFunc(func() { close(h.release) })
	defer release()
	c, err := New(llm.Config{Provider: llm.ProviderOllama, Model: "chat-v1:latest", BaseURL: srv.URL, MaxParallel: 2})
	if err != nil {
		t.Fatal(err)
	}
	msgs := []llm.Message{{Role: llm.RoleUser, Content: "hi"}}
	var wg sync.WaitGroup
	errs := make(chan error, 5)
	for range 2 {
		wg.Go(func() {
			_, err := c.Chat(context.Background(), llm.Request{Messages: msgs})
			errs <- err
		})
	}
	<-h.arrived
	<-h.arrived
	// Three more calls wait for a turn; each attempt may take 300 ms once it has one. The
	// held calls keep both turns for longer than that: a timeout that counted the wait would
	// end these calls before they reach the model.
	for range 3 {
		wg.Go(func() {
			_, err := c.Chat(context.Background(), llm.Request{Messages: msgs, Timeout: 300 * time.Millisecond})
			errs <- err
		})
	}
	time.Sleep(600 * time.Millisecond)
	if got := h.seen.Load(); got != 2 {
		t.Errorf("the model got %d calls while 2 were under way, want 2", got)
	}
	release()
	wg.Wait()
	close(errs)
	for err := range errs {
		if err != nil {
			t.Errorf("call failed: %v", err)
		}
	}
	if h.seen.Load() != 5 || h.most.Load() != 2 {
		t.Fatalf("model calls %d, at most %d at once; want 5, 2", h.seen.Load(), h.most.Load())
	}
}

func TestWaitingForATurnEndsWithTheCaller(t *testing.T) {
	h := &heldServer{held: 1, release: make(chan struct{}), arrived: make(chan struct{}, 1)}
	srv := httptest.NewServer(h)
	defer srv.Close()
	defer close(h.release)
	c, err := New(llm.Config{Provider: llm.ProviderOllama, Model: "chat-v1:latest", BaseURL: srv.URL, MaxParallel: 1})
	if err != nil {
		t.Fatal(err)
	}
	msgs := []llm.Message{{Role: llm.RoleUser, Content: "hi"}}
	go func() { _, _ = c.Chat(context.Background(), llm.Request{Messages: msgs}) }()
	<-h.arrived
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	_, err = c.Chat(ctx, llm.Request{Messages: msgs})
	if err == nil || llm.Attempts(err) != 0 {
		t.Fatalf("a call whose caller left while waiting: err %v, attempts %d; want an error and 0 attempts", err, llm.Attempts(err))
	}
	if h.seen.Load() != 1 {
		t.Fatalf("the model got %d calls, want 1", h.seen.Load())
	}
}

func TestMaxParallelDefaultsAndValidation(t *testing.T) {
	if got := (llm.Config{Provider: llm.ProviderOllama, Model: "m"}).WithDefaults().MaxParallel; got != llm.DefaultOllamaParallel {
		t.Errorf("default max_parallel = %d, want %d", got, llm.DefaultOllamaParallel)
	}
	if got := (llm.Config{Provider: llm.ProviderOllama, Model: "m"}).WithOllama(llm.OllamaSettings{MaxParallel: 3}).MaxParallel; got != 3 {
		t.Errorf("max_parallel from the ollama section = %d, want 3", got)
	}
	if err := (llm.Config{Provider: llm.ProviderOllama, Model: "m", MaxParallel: -1}).Validate(); err == nil {
		t.Error("a negative max_parallel was accepted")
	}
}
