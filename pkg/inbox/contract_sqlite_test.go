//go:build !serveronly

package inbox_test

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"path/filepath"
	"testing"

	"github.com/picoclaw-suite/picoclaw/pkg/inbox"
	"github.com/picoclaw-suite/picoclaw/pkg/sqlstate"
)

// The contracts on the SQLite engine, which a build with -tags serveronly leaves out.

func TestSQLiteContract(t *testing.T)      { runContract(t, sqliteBackend) }
func TestSQLiteOrderContract(t *testing.T) { runOrderContract(t, sqliteOrderBackend) }

// sqliteBackend runs on a state database in the test's temporary directory.
func sqliteBackend(t *testing.T) *backend {
	path := filepath.Join(t.TempDir(), "state.db")
	var db *sqlstate.DB
	open := func() inbox.Engine {
		if db != nil {
			if err := db.Close(); err != nil {
				t.Fatal(err)
			}
		}
		db = openState(t, path, sqlstate.Options{})
		return sqliteEngine(t, db)
	}
	// The order is read from the pending entries: nothing of its own is stored.
	b := &backend{engine: open(), reopen: open, leftovers: func(*testing.T, string) int64 { return 0 }}
	t.Cleanup(func() { _ = db.Close() })
	b.seen = func(t *testing.T, stream string) int64 {
		ctx := context.Background()
		if _, err := db.Sweep(ctx); err != nil {
			t.Fatal(err)
		}
		return count(t, db, `SELECT count(*) FROM inbox_seen WHERE stream = ?`, stream)
	}
	b.forge = func(t *testing.T, stream, id, key, payload, meta, mac string) {
		err := db.Tx(context.Background(), func(tx *sql.Tx) error {
			var seq int64
			if err := tx.QueryRow(`INSERT INTO inbox_streams (stream, last_seq) VALUES (?, 1)
				ON CONFLICT (stream) DO UPDATE SET last_seq = last_seq + 1 RETURNING last_seq`, stream).Scan(&seq); err != nil {
				return err
			}
			_, err := tx.Exec(`INSERT INTO inbox_entries (stream, seq, ms, event_id, event_key, payload, meta, mac)
				VALUES (?, ?, ?, ?, ?, ?, ?, ?)`, stream, seq, sqlstate.NowMS(), id, key, []byte(payload), meta, mac)
			return err
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	return b
}

func openState(t testing.TB, path string, o sqlstate.Options) *sqlstate.DB {
	t.Helper()
	db, err := sqlstate.Open(context.Background(), path, o)
	if err != nil {
		t.Fatal(err)
	}
	return db
}

func sqliteEngine(t testing.TB, db *sqlstate.DB) inbox.Engine {
	t.Helper()
	e, err := inbox.SQLiteEngine(context.Background(), db)
	if err != nil {
		t.Fatal(err)
	}
	return e
}

func count(t testing.TB, db *sqlstate.DB, query string, args ...any) int64 {
	t.Helper()
	var n int64
	if err := db.QueryRowContext(context.Background(), query, args...).Scan(&n); err != nil {
		t.Fatal(err)
	}
	return n
}

func sqliteOrderBackend(t *testing.T) *orderBackend {
	db := openState(t, filepath.Join(t.TempDir(), "state.db"), sqlstate.Options{})
	t.Cleanup(func() { _ = db.Close() })
	return &orderBackend{
		engine: sqliteEngine(t, db),
		move: func(t *testing.T, stream, id, consumer string) {
			_, seq, _ := cutID(id)
			if _, err := db.ExecContext(context.Background(), `UPDATE inbox_pending SET consumer = ? WHERE stream = ? AND seq = ?`, consumer, stream, seq); err != nil {
				t.Fatal(err)
			}
		},
		owner: func(t *testing.T, stream, id string) string {
			_, seq, _ := cutID(id)
			var c string
			err := db.QueryRowContext(context.Background(), `SELECT consumer FROM inbox_pending WHERE stream = ? AND seq = ?`, stream, seq).Scan(&c)
			if err != nil && !errors.Is(err, sql.ErrNoRows) {
				t.Fatal(err)
			}
			return c
		},
		// The order is read from the pending entries: nothing of its own is stored.
		leftovers: func(*testing.T, string) int64 { return 0 },
		order: func(t *testing.T, stream, key string) []string {
			rows, err := db.QueryContext(context.Background(), `SELECT e.ms, e.seq FROM inbox_entries e
				JOIN inbox_pending p ON p.stream = e.stream AND p.seq = e.seq
				WHERE e.stream = ? AND e.event_key = ? ORDER BY e.seq`, stream, key)
			if err != nil {
				t.Fatal(err)
			}
			defer rows.Close()
			var ids []string
			for rows.Next() {
				var ms, seq int64
				if err := rows.Scan(&ms, &seq); err != nil {
					t.Fatal(err)
				}
				ids = append(ids, fmt.Sprintf("%d-%d", ms, seq))
			}
			if err := rows.Err(); err != nil {
				t.Fatal(err)
			}
			return ids
		},
	}
}
