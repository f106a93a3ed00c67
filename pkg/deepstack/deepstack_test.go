package deepstack

import (
	"runtime"
	"testing"
)

// Reserve grows a fresh goroutine's stack by at least Size in one step: the frame that makes the
// runtime grow it is kept at its full size by the compiler.
func TestReserveGrowsAFreshGoroutinesStack(t *testing.T) {
	grew := make(chan uint64)
	go func() {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		Reserve()
		runtime.ReadMemStats(&after)
		grew <- after.StackInuse - before.StackInuse
	}()
	if n := <-grew; n < Size {
		t.Fatalf("stack in use grew by %d bytes, want at least %d", n, Size)
	}
}

// On a goroutine whose stack is already large enough, Reserve takes no new stack.
func TestReserveOnAGrownStackTakesNoMore(t *testing.T) {
	grew := make(chan uint64)
	go func() {
		Reserve()
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		Reserve()
		runtime.ReadMemStats(&after)
		grew <- after.StackInuse - before.StackInuse
	}()
	if n := <-grew; n != 0 {
		t.Fatalf("stack in use grew by %d bytes on a second Reserve, want 0", n)
	}
}
