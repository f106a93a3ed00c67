package deepstack

import (
	"runtime"
	"testing"
)

// stackGrowth is how much the process's stack in use changed around a Reserve on a fresh
// goroutine (after one Reserve already, when once is set). The figure is the whole process's: a stack another goroutine gives back
// meanwhile (a collection frees a dead goroutine's) lowers it, so the tests look more than once.
func stackGrowth(once bool) int64 {
	grew := make(chan int64)
	go func() {
		if once {
			Reserve()
		}
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		Reserve()
		runtime.ReadMemStats(&after)
		grew <- int64(after.StackInuse) - int64(before.StackInuse)
	}()
	return <-grew
}

// attempts bounds the looks of a test: one that is not disturbed answers.
const attempts = 5

// Reserve grows a fresh goroutine's stack by at least Size in one step: the frame that makes the
// runtime grow it is kept at its full size by the compiler.
func TestReserveGrowsAFreshGoroutinesStack(t *testing.T) {
	var n int64
	for range attempts {
		runtime.GC()
		if n = stackGrowth(false); n >= Size {
			return
		}
	}
	t.Fatalf("stack in use grew by %d bytes, want at least %d", n, Size)
}

// On a goroutine whose stack is already large enough, Reserve takes no new stack.
func TestReserveOnAGrownStackTakesNoMore(t *testing.T) {
	var n int64
	for range attempts {
		runtime.GC()
		if n = stackGrowth(true); n <= 0 {
			return
		}
	}
	t.Fatalf("stack in use grew by %d bytes on a second Reserve, want 0", n)
}
