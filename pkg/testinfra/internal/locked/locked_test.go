package locked

import (
	"sync"
	"testing"
)

func TestCopyIsDetachedFromLaterAppends(t *testing.T) {
	var (
		mu   sync.Mutex
		list = make([]string, 1, 4)
	)
	list[0] = "a"
	got := Copy(&mu, &list)
	list = append(list, "b")
	list[0] = "changed"
	if len(got) != 1 || got[0] != "a" {
		t.Fatalf("copy = %v", got)
	}
	if empty := Copy(&mu, new([]int)); empty != nil {
		t.Fatalf("copy of nothing = %v", empty)
	}
}
