//go:build !sqliteonly

package store

import (
	"errors"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
)

// postgresUnavailable reports the driver's connection-level failures: no connection, a
// timeout, or the server going away.
func postgresUnavailable(err error) bool {
	var ce *pgconn.ConnectError
	return errors.As(err, &ce) || pgconn.Timeout(err) || serverGoingAway(err)
}

// serverGoingAway reports the server's own word that it cannot serve now: a connection
// exception (class 08) or an operator intervention that ends sessions (57P01 admin shutdown,
// 57P02 crash shutdown, 57P03 cannot connect now).
func serverGoingAway(err error) bool {
	var pe *pgconn.PgError
	if !errors.As(err, &pe) {
		return false
	}
	return strings.HasPrefix(pe.Code, "08") || pe.Code == "57P01" || pe.Code == "57P02" || pe.Code == "57P03"
}
