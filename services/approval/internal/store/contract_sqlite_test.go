//go:build !serveronly

package store_test

import (
	"context"
	"fmt"
	"io"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/picoclaw-suite/picoclaw/pkg/sqlstate"
	"github.com/picoclaw-suite/picoclaw/pkg/sqlstate/sqlstatetest"
	"github.com/picoclaw-suite/picoclaw/services/approval/internal/app"
	"github.com/picoclaw-suite/picoclaw/services/approval/internal/store"
)

// The contracts on the SQLite stores, which a build with -tags serveronly leaves out.

// sqliteStores are the SQLite backends onBothStores runs on.
func sqliteStores() map[string]func(*testing.T) backend {
	return map[string]func(*testing.T) backend{"sqlite": openSQLite}
}

func TestContractSQLite(t *testing.T)                 { runContract(t, openSQLite) }
func TestImagesSQLite(t *testing.T)                   { runImageContract(t, openSQLite) }
func TestNoticesSQLite(t *testing.T)                  { runNoticeContract(t, openSQLite) }
func TestTamperedJobRefusesWritesSQLite(t *testing.T) { tamperedRefuses(t, openSQLite) }
func TestGrantContractSQLite(t *testing.T)            { grantContract(t, sqliteGrantEngine) }

func openSQLite(t *testing.T) backend {
	t.Helper()
	path := filepath.Join(t.TempDir(), "audit.db")
	ctx := context.Background()
	s, err := store.OpenSQLite(ctx, path, store.WithKeyring(testKeys))
	if err != nil {
		t.Fatal(err)
	}
	cur := s
	t.Cleanup(func() { _ = cur.Close() })
	return backend{
		store: s,
		reopen: func(t *testing.T) app.Store {
			_ = cur.Close()
			n, err := store.OpenSQLite(ctx, path, store.WithKeyring(testKeys))
			if err != nil {
				t.Fatal(err)
			}
			cur = n
			return n
		},
		exec: func(t *testing.T, sql string, args ...any) error {
			_, err := cur.DB().ExecContext(ctx, sqliteParams(sql), args...)
			return err
		},
		// SQLite has no roles: whoever can write the file can drop the triggers.
		tamper: func(t *testing.T, sql string, args ...any) {
			t.Helper()
			for _, q := range []string{`DROP TRIGGER IF EXISTS approval_events_no_update`, `DROP TRIGGER IF EXISTS approval_events_no_delete`, sqliteParams(sql)} {
				if _, err := cur.DB().ExecContext(ctx, q, args...); err != nil && q == sqliteParams(sql) {
					t.Fatalf("tamper %q: %v", sql, err)
				}
			}
		},
		audit: auditOf(func() app.AuditReader { return cur }),
	}
}

// sqliteParams turns $1-style placeholders into ?.
func sqliteParams(q string) string {
	out := []rune{}
	skip := false
	for _, r := range q {
		switch {
		case r == '$':
			out = append(out, '?')
			skip = true
		case skip && r >= '0' && r <= '9':
		default:
			skip = false
			out = append(out, r)
		}
	}
	return string(out)
}

func newSQLiteGrants(t *testing.T, db *sqlstate.DB, sealKey []byte, log *slog.Logger) *store.SQLiteGrants {
	t.Helper()
	g, err := store.NewSQLiteGrants(context.Background(), db, sealKey, log)
	if err != nil {
		t.Fatal(err)
	}
	return g
}

func sqliteGrantEngine(t *testing.T) grantEngine {
	h := sqlstatetest.New(t)
	opened := false
	ctx := context.Background()
	return grantEngine{
		open: func(t *testing.T, sealKey []byte, log *slog.Logger) app.GrantStore {
			db := h.DB()
			if opened {
				db = h.Reopen()
			}
			opened = true
			return newSQLiteGrants(t, db, sealKey, log)
		},
		raw: func(t *testing.T) string {
			var v []byte
			_ = h.DB().QueryRowContext(ctx, `SELECT value FROM `+store.GrantsTable).Scan(&v)
			return string(v)
		},
		write: func(t *testing.T, value string) {
			if _, err := h.DB().ExecContext(ctx, `INSERT INTO `+store.GrantsTable+` (name, value, expires_at) VALUES ('auto_approve', ?, ?)
				ON CONFLICT (name) DO UPDATE SET value = excluded.value, expires_at = excluded.expires_at`,
				[]byte(value), sqlstate.ExpiresAt(time.Hour)); err != nil {
				t.Fatal(err)
			}
		},
		ttl: func(t *testing.T) time.Duration {
			var exp int64
			if err := h.DB().QueryRowContext(ctx, `SELECT expires_at FROM `+store.GrantsTable).Scan(&exp); err != nil {
				t.Fatal(err)
			}
			return time.Until(time.UnixMilli(exp))
		},
		down: func(t *testing.T) app.GrantStore {
			return sqlstatetest.Closed(t, func(db *sqlstate.DB) app.GrantStore { return newSQLiteGrants(t, db, grantKey, nil) })
		},
	}
}

// Expired grants are deleted by the engine's sweeper, as Redis drops the expired key.
func TestSQLiteGrantIsSwept(t *testing.T) {
	ctx := context.Background()
	db := sqlstatetest.New(t).DB()
	setGrant(t, newSQLiteGrants(t, db, grantKey, nil), testGrant("g1"), time.Millisecond)
	time.Sleep(5 * time.Millisecond)
	if n, err := db.Sweep(ctx); err != nil || n != 1 {
		t.Fatalf("swept %d (%v), want the grant", n, err)
	}
}

// Auto-Approve switched on stays on, and switched off stays off, when the process is killed
// right after the store returned.
func TestSQLiteGrantSurvivesSIGKILL(t *testing.T) {
	dir := t.TempDir()
	open := func(t *testing.T, dir string) *store.SQLiteGrants {
		return newSQLiteGrants(t, sqlstatetest.OpenAt(t, filepath.Join(dir, "state.db")).DB(), grantKey, nil)
	}
	t.Run("set", func(t *testing.T) {
		sqlstatetest.Crash(t, dir, func(t *testing.T, dir string, _ io.Writer) {
			setGrant(t, open(t, dir), testGrant("g1"), time.Hour)
		})
		if got := getGrant(t, open(t, dir)); got == nil || got.ID != "g1" {
			t.Fatalf("after the crash: %+v, want g1", got)
		}
	})
	t.Run("delete", func(t *testing.T) {
		lines := sqlstatetest.Crash(t, dir, func(t *testing.T, dir string, out io.Writer) {
			fmt.Fprintln(out, deleteGrant(t, open(t, dir)).ID)
		})
		if len(lines) != 1 || lines[0] != "g1" {
			t.Fatalf("the child deleted %v, want g1", lines)
		}
		if got := getGrant(t, open(t, dir)); got != nil {
			t.Fatalf("Auto-Approve came back on after the crash: %+v", got)
		}
	})
}
