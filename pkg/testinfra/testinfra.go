// Package testinfra gives tests an isolated Postgres schema or Redis key space.
//
// Where the servers come from, in order: PICOCLAW_TEST_POSTGRES_DSN / PICOCLAW_TEST_REDIS_ADDR;
// otherwise containers started with testcontainers-go when a Docker engine answers; otherwise
// the test is skipped with a message — unless PICOCLAW_REQUIRE_INTEGRATION=1, which turns every
// such skip into a failure (CI sets it).
package testinfra

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/redis/go-redis/v9"
	"github.com/testcontainers/testcontainers-go"
	"github.com/testcontainers/testcontainers-go/wait"
)

// Environment variables read by this package.
const (
	EnvPostgresDSN         = "PICOCLAW_TEST_POSTGRES_DSN"
	EnvRedisAddr           = "PICOCLAW_TEST_REDIS_ADDR"
	EnvRequireIntegration  = "PICOCLAW_REQUIRE_INTEGRATION"
	defaultPostgresImage   = "postgres:15-alpine"
	defaultRedisImage      = "redis:7-alpine"
	containerStartDeadline = 2 * time.Minute
)

// TB is the part of testing.TB this package uses (a fake of it tests the failure path).
type TB interface {
	Helper()
	Name() string
	Cleanup(func())
	Logf(format string, args ...any)
	Fatalf(format string, args ...any)
	Skipf(format string, args ...any)
}

var _ TB = (testing.TB)(nil)

// Required reports whether integration tests must run (PICOCLAW_REQUIRE_INTEGRATION=1).
func Required() bool {
	v := strings.TrimSpace(os.Getenv(EnvRequireIntegration))
	return v == "1" || strings.EqualFold(v, "true")
}

// unavailable skips, or fails when integration is required.
func unavailable(t TB, what string, err error) {
	t.Helper()
	if Required() {
		t.Fatalf("testinfra: %s is required (%s=1) but not reachable: %v", what, EnvRequireIntegration, err)
		return
	}
	t.Skipf("testinfra: skipping, %s not reachable: %v (set %s to run)", what, err, envFor(what))
}

func envFor(what string) string {
	if what == "postgres" {
		return EnvPostgresDSN
	}
	return EnvRedisAddr
}

// uniqueName builds a short, identifier-safe, unique name for the test.
func uniqueName(t TB) string {
	var b [5]byte
	_, _ = rand.Read(b[:])
	base := strings.Map(func(r rune) rune {
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			return r
		case r >= 'A' && r <= 'Z':
			return r + ('a' - 'A')
		default:
			return '_'
		}
	}, t.Name())
	if len(base) > 30 {
		base = base[:30]
	}
	return "t_" + base + "_" + hex.EncodeToString(b[:])
}

// PostgresDB is an isolated schema in a Postgres server.
type PostgresDB struct {
	// DSN connects with search_path set to Schema.
	DSN    string
	Schema string
}

// Postgres returns a fresh schema, dropped when the test ends.
func Postgres(t TB) PostgresDB {
	t.Helper()
	base, err := postgresBase()
	if err != nil {
		unavailable(t, "postgres", err)
		return PostgresDB{}
	}
	schema := uniqueName(t)
	id := pgx.Identifier{schema}.Sanitize()
	if !createDropped(t, base, "schema "+schema, "CREATE SCHEMA "+id, "DROP SCHEMA "+id+" CASCADE") {
		return PostgresDB{}
	}
	return PostgresDB{DSN: WithSearchPath(base, schema), Schema: schema}
}

// WithSearchPath returns dsn (URL or key=value form) with search_path set.
func WithSearchPath(dsn, schema string) string {
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		u, err := url.Parse(dsn)
		if err == nil {
			q := u.Query()
			q.Set("search_path", schema)
			u.RawQuery = q.Encode()
			return u.String()
		}
	}
	return strings.TrimSpace(dsn) + " search_path=" + schema
}

// RedisDB is an isolated key space in a Redis server.
type RedisDB struct {
	Addr string
	// Prefix must start every key the test writes; keys under it are deleted at cleanup.
	Prefix string
	Client *redis.Client
}

// Redis returns a client and a unique key prefix; keys under the prefix are deleted when the
// test ends.
func Redis(t TB) RedisDB {
	t.Helper()
	addr, err := redisAddr()
	if err != nil {
		unavailable(t, "redis", err)
		return RedisDB{}
	}
	client := redis.NewClient(&redis.Options{Addr: addr, DialTimeout: 3 * time.Second, MaxRetries: -1})
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := client.Ping(ctx).Err(); err != nil {
		_ = client.Close()
		unavailable(t, "redis", err)
		return RedisDB{}
	}
	prefix := uniqueName(t) + ":"
	t.Cleanup(func() {
		defer client.Close()
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		iter := client.Scan(ctx, 0, prefix+"*", 500).Iterator()
		for iter.Next(ctx) {
			client.Del(ctx, iter.Val())
		}
	})
	return RedisDB{Addr: addr, Prefix: prefix, Client: client}
}

var (
	pgOnce, redisOnce sync.Once
	pgDSN, rAddr      string
	pgErr, rErr       error
)

func postgresBase() (string, error) {
	if dsn := os.Getenv(EnvPostgresDSN); dsn != "" {
		return dsn, nil
	}
	pgOnce.Do(func() {
		if pgDSN = localPostgres(); pgDSN != "" {
			return
		}
		pgDSN, pgErr = startContainer(defaultPostgresImage, "5432/tcp",
			map[string]string{"POSTGRES_PASSWORD": "picoclaw", "POSTGRES_DB": "picoclaw"},
			wait.ForLog("database system is ready to accept connections").WithOccurrence(2),
			func(host, port string) string {
				return fmt.Sprintf("postgres://postgres:picoclaw@%s:%s/picoclaw?sslmode=disable", host, port)
			})
	})
	return pgDSN, pgErr
}

func redisAddr() (string, error) {
	if addr := os.Getenv(EnvRedisAddr); addr != "" {
		return addr, nil
	}
	redisOnce.Do(func() {
		if rAddr = localRedis(); rAddr != "" {
			return
		}
		rAddr, rErr = startContainer(defaultRedisImage, "6379/tcp", nil,
			wait.ForLog("Ready to accept connections"),
			func(host, port string) string { return host + ":" + port })
	})
	return rAddr, rErr
}

// localPostgresDSNs are where a developer's own Postgres usually answers without a password
// (trust or peer authentication on the default port).
var localPostgresDSNs = []string{
	"postgres://postgres@127.0.0.1:5432/test?sslmode=disable",
	"postgres://postgres@127.0.0.1:5432/postgres?sslmode=disable",
}

// localPostgres is the first default local Postgres that answers, or "".
func localPostgres() string {
	for _, dsn := range localPostgresDSNs {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		conn, err := pgx.Connect(ctx, dsn)
		if err == nil {
			err = conn.Ping(ctx)
			_ = conn.Close(ctx)
		}
		cancel()
		if err == nil {
			return dsn
		}
	}
	return ""
}

// localRedis is the default local Redis address when it answers PING, or "".
func localRedis() string {
	const addr = "127.0.0.1:6379"
	c := redis.NewClient(&redis.Options{Addr: addr, DialTimeout: time.Second, MaxRetries: -1})
	defer c.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
	defer cancel()
	if c.Ping(ctx).Err() != nil {
		return ""
	}
	return addr
}

// startContainer starts a container for the whole test binary; the testcontainers reaper
// removes it when the process ends.
func startContainer(image, port string, env map[string]string, strategy wait.Strategy, addr func(host, port string) string) (out string, err error) {
	defer func() {
		// testcontainers can panic when no Docker engine is configured at all.
		if r := recover(); r != nil {
			err = fmt.Errorf("docker unavailable: %v", r)
		}
	}()
	ctx, cancel := context.WithTimeout(context.Background(), containerStartDeadline)
	defer cancel()
	c, err := testcontainers.GenericContainer(ctx, testcontainers.GenericContainerRequest{
		ContainerRequest: testcontainers.ContainerRequest{
			Image: image, ExposedPorts: []string{port}, Env: env, WaitingFor: strategy,
		},
		Started: true,
	})
	if err != nil {
		return "", fmt.Errorf("no %s env var and no usable Docker engine: %w", envForImage(image), err)
	}
	host, err := c.Host(ctx)
	if err != nil {
		return "", err
	}
	mapped, err := c.MappedPort(ctx, port)
	if err != nil {
		return "", err
	}
	return addr(host, mapped.Port()), nil
}

func envForImage(image string) string {
	if strings.HasPrefix(image, "postgres") {
		return EnvPostgresDSN
	}
	return EnvRedisAddr
}

// PostgresRole creates a login role with a unique name and a random password and returns it with
// db's DSN rewritten to connect as it. The role's privileges are revoked and the role dropped
// when the test ends.
func PostgresRole(t TB, db PostgresDB) (role, dsn string) {
	t.Helper()
	base, err := postgresBase()
	if err != nil {
		unavailable(t, "postgres", err)
		return "", ""
	}
	role = "r" + strings.TrimPrefix(uniqueName(t), "t")
	var pw [16]byte
	_, _ = rand.Read(pw[:])
	password := hex.EncodeToString(pw[:])
	id := pgx.Identifier{role}.Sanitize()
	if !createDropped(t, base, "role "+role, "CREATE ROLE "+id+" LOGIN PASSWORD '"+password+"'", "DROP OWNED BY "+id, "DROP ROLE "+id) {
		return "", ""
	}
	return role, withUser(db.DSN, role, password)
}

// createDropped runs create on the server at base as its administrator and, when the test ends,
// each drop statement in turn (failures logged); what names the object in messages. It reports
// whether the object was made (false: the test was skipped or failed).
func createDropped(t TB, base, what, create string, drop ...string) bool {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	conn, err := pgx.Connect(ctx, base)
	if err != nil {
		unavailable(t, "postgres", err)
		return false
	}
	defer conn.Close(ctx)
	if _, err := conn.Exec(ctx, create); err != nil {
		t.Fatalf("testinfra: create %s: %v", what, err)
		return false
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		c, err := pgx.Connect(ctx, base)
		if err != nil {
			t.Logf("testinfra: drop %s: %v", what, err)
			return
		}
		defer c.Close(ctx)
		for _, q := range drop {
			if _, err := c.Exec(ctx, q); err != nil {
				t.Logf("testinfra: drop %s: %v", what, err)
			}
		}
	})
	return true
}

// withUser returns dsn (URL or key=value form) connecting as user with password.
func withUser(dsn, user, password string) string {
	if strings.HasPrefix(dsn, "postgres://") || strings.HasPrefix(dsn, "postgresql://") {
		if u, err := url.Parse(dsn); err == nil {
			u.User = url.UserPassword(user, password)
			return u.String()
		}
	}
	return strings.TrimSpace(dsn) + " user=" + user + " password=" + password
}
