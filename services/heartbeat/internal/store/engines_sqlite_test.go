//go:build !serveronly

package store_test

import (
	"context"
	"testing"

	"github.com/picoclaw-suite/picoclaw/pkg/sqlstate"
	"github.com/picoclaw-suite/picoclaw/pkg/sqlstate/sqlstatetest"
	"github.com/picoclaw-suite/picoclaw/services/heartbeat/internal/app"
	"github.com/picoclaw-suite/picoclaw/services/heartbeat/internal/store"
)

// The contract on the SQLite engine, which a build with -tags serveronly leaves out.
func TestSQLiteContract(t *testing.T) {
	contract(t, func(t *testing.T) engine {
		h := sqlstatetest.New(t)
		open := func(t *testing.T, db *sqlstate.DB) app.Store {
			s, err := store.NewSQLite(context.Background(), db)
			if err != nil {
				t.Fatal(err)
			}
			return s
		}
		return engine{
			store:  open(t, h.DB()),
			reopen: func(t *testing.T) app.Store { return open(t, h.Reopen()) },
		}
	})
}
