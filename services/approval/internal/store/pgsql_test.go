//go:build !sqliteonly

package store

import (
	"context"
	"errors"
	"net/url"
	"os"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/lib/pq"

	"github.com/picoclaw-suite/picoclaw/pkg/testinfra"
)

// noSSLModeEnv unsets PGSSLMODE for the test (an empty value is an error to lib/pq).
func noSSLModeEnv(t *testing.T) {
	t.Setenv("PGSSLMODE", "")
	_ = os.Unsetenv("PGSSLMODE")
}

func TestPGConfigDefaultsAndPoolSettings(t *testing.T) {
	noSSLModeEnv(t)
	cfg, pool, err := pgConfig("postgres://u@db:5432/app?search_path=s1&pool_max_conns=7&pool_max_conn_idle_time=90s&statement_cache_capacity=10&pool_min_conns=1")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.SSLMode != pq.SSLModePrefer {
		t.Errorf("sslmode = %q, want prefer (libpq's default)", cfg.SSLMode)
	}
	if pool.maxConns != 7 || pool.idle != 90*time.Second || pool.lifetime != time.Hour {
		t.Errorf("pool = %+v", pool)
	}
	if len(cfg.Runtime) != 1 || cfg.Runtime["search_path"] != "s1" {
		t.Errorf("run-time parameters sent to the server: %v, want only search_path", cfg.Runtime)
	}

	cfg, pool, err = pgConfig("host=db user=u dbname=app sslmode=disable")
	if err != nil {
		t.Fatal(err)
	}
	if cfg.SSLMode != pq.SSLModeDisable || pool.maxConns != max(4, runtime.NumCPU()) || pool.idle != 30*time.Minute {
		t.Errorf("keyword DSN: sslmode %q, pool %+v", cfg.SSLMode, pool)
	}
	if _, _, err := pgConfig("postgres://u@db/app?pool_max_conns=none"); err == nil {
		t.Error("a bad pool_max_conns was accepted")
	}
}

// The pool's connections prepare a statement with parameters once and reuse it; one the
// server can no longer run as prepared is prepared again. A DSN without sslmode reaches a
// server without TLS (prefer).
func TestPGConnectionsKeepStatementsPrepared(t *testing.T) {
	ctx := context.Background()
	pg := testinfra.Postgres(t)
	u, err := url.Parse(pg.DSN)
	if err != nil {
		t.Skipf("DSN is not a URL: %v", err)
	}
	q := u.Query()
	tls := q.Get("sslmode") != "disable"
	q.Del("sslmode")
	u.RawQuery = q.Encode()
	noSSLModeEnv(t)
	db, err := pgOpen(u.String())
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	conn, err := db.Conn(ctx) // one connection: prepared statements belong to a session
	if err != nil {
		if !tls {
			t.Fatalf("connect without sslmode to a server the test reaches with sslmode=disable: %v", err)
		}
		t.Fatal(err)
	}
	defer conn.Close()

	const query = `SELECT $1::int + 1`
	for i := range 3 {
		var n int
		if err := conn.QueryRowContext(ctx, query, i).Scan(&n); err != nil || n != i+1 {
			t.Fatalf("query %d: %d, %v", i, n, err)
		}
	}
	if _, err := conn.ExecContext(ctx, `SELECT $1::text`, "x"); err != nil {
		t.Fatal(err)
	}
	prepared := func(stmt string) int {
		t.Helper()
		var n int
		if err := conn.QueryRowContext(ctx, `SELECT count(*) FROM pg_prepared_statements WHERE statement = '`+stmt+`'`).Scan(&n); err != nil {
			t.Fatal(err)
		}
		return n
	}
	if n := prepared(query); n != 1 {
		t.Errorf("%q is prepared %d times on the connection, want once", query, n)
	}
	if n := prepared(`SELECT $1::text`); n != 1 {
		t.Errorf("the Exec statement is prepared %d times, want once", n)
	}

	// A change of the table's columns makes the prepared SELECT * unusable (0A000): the next
	// run fails, the one after prepares it again.
	if _, err := conn.ExecContext(ctx, `CREATE TEMP TABLE pgsql_test (a int)`); err != nil {
		t.Fatal(err)
	}
	sel := `SELECT * FROM pgsql_test WHERE $1::int IS NOT NULL`
	if _, err := conn.ExecContext(ctx, sel, 1); err != nil {
		t.Fatal(err)
	}
	if _, err := conn.ExecContext(ctx, `ALTER TABLE pgsql_test ADD COLUMN b int`); err != nil {
		t.Fatal(err)
	}
	_, err = conn.ExecContext(ctx, sel, 1)
	if pe := pgError(err); err != nil && (pe == nil || pe.Code != "0A000") {
		t.Fatalf("after the change: %v", err)
	}
	if _, err := conn.ExecContext(ctx, sel, 1); err != nil {
		t.Fatalf("the statement was not prepared again: %v", err)
	}
}

func TestPGConnectErrorsAreMarked(t *testing.T) {
	noSSLModeEnv(t)
	db, err := pgOpen("postgres://u@127.0.0.1:1/app?connect_timeout=2")
	if err != nil {
		t.Fatal(err)
	}
	defer db.Close()
	err = db.PingContext(context.Background())
	var ce *pgConnectError
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), "127.0.0.1:1") && !strings.Contains(err.Error(), "refused") {
		t.Fatalf("ping of a closed port: %v", err)
	}
}
