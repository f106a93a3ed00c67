package sqlitealloc_test

import (
	"context"
	"fmt"
	"io"
	"path/filepath"
	"slices"
	"testing"
	"time"

	"github.com/picoclaw-suite/picoclaw/pkg/jobid"
	"github.com/picoclaw-suite/picoclaw/pkg/jobid/jobidtest"
	"github.com/picoclaw-suite/picoclaw/pkg/jobid/sqlitealloc"
	"github.com/picoclaw-suite/picoclaw/pkg/sqlstate"
	"github.com/picoclaw-suite/picoclaw/pkg/sqlstate/sqlstatetest"
)

func newAlloc(t testing.TB, db *sqlstate.DB, opts ...jobid.Option) *jobid.Daily {
	t.Helper()
	a, err := sqlitealloc.New(context.Background(), db, jobidtest.Tokyo(t), opts...)
	if err != nil {
		t.Fatal(err)
	}
	return a
}

func expiresAt(t *testing.T, db *sqlstate.DB, day string) int64 {
	t.Helper()
	var exp int64
	if err := db.QueryRowContext(context.Background(), `SELECT expires_at FROM `+sqlitealloc.Table+` WHERE day = ?`, day).Scan(&exp); err != nil {
		t.Fatal(err)
	}
	return exp
}

func engine(t *testing.T) jobidtest.Engine {
	h := sqlstatetest.New(t)
	opened := false
	return jobidtest.Engine{
		Open: func(t *testing.T, opts ...jobid.Option) jobid.Allocator {
			db := h.DB()
			if opened {
				db = h.Reopen()
			}
			opened = true
			return newAlloc(t, db, opts...)
		},
		Broken: func(t *testing.T, opts ...jobid.Option) jobid.Allocator {
			return sqlstatetest.Closed(t, func(db *sqlstate.DB) jobid.Allocator { return newAlloc(t, db, opts...) })
		},
		TTL: func(t *testing.T, day string) time.Duration {
			return time.Until(time.UnixMilli(expiresAt(t, h.DB(), day)))
		},
		Expire: func(t *testing.T, day string) {
			if _, err := h.DB().ExecContext(context.Background(), `UPDATE `+sqlitealloc.Table+` SET expires_at = ? WHERE day = ?`,
				sqlstate.NowMS()-1, day); err != nil {
				t.Fatal(err)
			}
		},
	}
}

func TestContract(t *testing.T) { jobidtest.Contract(t, engine) }

// Counters of old days are deleted by the engine's sweeper, as Redis drops expired keys.
func TestExpiredCountersAreSwept(t *testing.T) {
	ctx := context.Background()
	db := sqlstatetest.New(t).DB()
	clock := jobidtest.NewClock(time.Date(2026, 11, 21, 9, 0, 0, 0, jobidtest.Tokyo(t)))
	a := newAlloc(t, db, jobid.WithClock(clock.Now))
	jobidtest.Next(t, a)
	clock.Set(clock.Now().AddDate(0, 0, 1))
	jobidtest.Next(t, a)
	if _, err := db.ExecContext(ctx, `UPDATE `+sqlitealloc.Table+` SET expires_at = ? WHERE day = '20261121'`, sqlstate.NowMS()-1); err != nil {
		t.Fatal(err)
	}
	if n, err := db.Sweep(ctx); err != nil || n != 1 {
		t.Fatalf("swept %d (%v), want the 21st's counter", n, err)
	}
	var days []string
	rows, err := db.QueryContext(ctx, `SELECT day FROM `+sqlitealloc.Table)
	if err != nil {
		t.Fatal(err)
	}
	defer rows.Close()
	for rows.Next() {
		var d string
		if err := rows.Scan(&d); err != nil {
			t.Fatal(err)
		}
		days = append(days, d)
	}
	if !slices.Equal(days, []string{"20261122"}) {
		t.Fatalf("counters left: %v", days)
	}
}

// A process killed right after allocating never sees its ids handed out again after a restart.
func TestNoIDTwiceAfterSIGKILL(t *testing.T) {
	dir := t.TempDir()
	clock := jobid.WithClock(func() time.Time { return time.Date(2026, 11, 21, 9, 0, 0, 0, time.UTC) })
	var handed []string
	for round := range 3 {
		t.Run(fmt.Sprint("crash", round), func(t *testing.T) {
			handed = append(handed, sqlstatetest.Crash(t, dir, func(t *testing.T, dir string, out io.Writer) {
				a := newAlloc(t, sqlstatetest.OpenAt(t, filepath.Join(dir, "state.db")).DB(), clock)
				for range 5 {
					fmt.Fprintln(out, jobidtest.Next(t, a))
				}
			})...)
		})
	}
	a := newAlloc(t, sqlstatetest.OpenAt(t, filepath.Join(dir, "state.db")).DB(), clock)
	handed = append(handed, jobidtest.Next(t, a))
	for i, id := range handed {
		if want := fmt.Sprintf("job_20261121_%03d", i+1); id != want {
			t.Fatalf("id %d = %s, want %s (all: %v)", i, id, want, handed)
		}
	}
}

func BenchmarkNext(b *testing.B) {
	jobidtest.Benchmark(b, newAlloc(b, sqlstatetest.New(b).DB()))
}
