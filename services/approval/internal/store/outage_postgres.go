//go:build !sqliteonly

package store

import (
	"context"
	"database/sql/driver"
	"errors"
	"strings"
)

// postgresUnavailable reports the driver's connection-level failures: no connection (opening
// one failed, or the pool gave up on a broken one), a timeout, or the server going away.
func postgresUnavailable(err error) bool {
	var ce *pgConnectError
	return errors.As(err, &ce) || errors.Is(err, driver.ErrBadConn) || errors.Is(err, context.DeadlineExceeded) ||
		serverGoingAway(err)
}

// serverGoingAway reports the server's own word that it cannot serve now: a connection
// exception (class 08) or an operator intervention that ends sessions (57P01 admin shutdown,
// 57P02 crash shutdown, 57P03 cannot connect now).
func serverGoingAway(err error) bool {
	pe := pgError(err)
	if pe == nil {
		return false
	}
	code := string(pe.Code)
	return strings.HasPrefix(code, "08") || code == "57P01" || code == "57P02" || code == "57P03"
}
