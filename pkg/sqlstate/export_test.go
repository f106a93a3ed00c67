package sqlstate

import (
	"testing"
	"time"
)

// WaitQueued waits until n calls wait in db's write queue behind the running one.
func WaitQueued(t *testing.T, db *DB, n int) {
	t.Helper()
	for range 5000 {
		db.writer.mu.Lock()
		l := len(db.writer.queue)
		db.writer.mu.Unlock()
		if l >= n {
			return
		}
		time.Sleep(time.Millisecond)
	}
	t.Fatalf("%d calls never queued", n)
}

// WALCheckpointPages is walCheckpointPages, for the tests.
const WALCheckpointPages = walCheckpointPages
