package once

import (
	"fmt"
	"strings"

	"github.com/jackc/pgx/v5/pgconn"
)

// checkServer refuses a guard of kind whose mechanism the server behind conn does not
// honour. It reads only what the server said when the connection started (no round trip).
func checkServer(kind, name string, conn *pgconn.PgConn) error {
	return serverRefusal(kind, name, conn.ParameterStatus)
}

// serverRefusal is checkServer over a lookup of the server's parameters.
func serverRefusal(kind, name string, param func(string) string) error {
	crdb := param("crdb_version")
	if crdb == "" {
		return nil
	}
	switch kind {
	case "transaction":
		return fmt.Errorf("%w: %s guard %s: %s accepts pg_advisory_xact_lock and locks nothing, so two callers would both decide; use a unique claim (Forever, Open, Statement, Episode) or a Lease there",
			ErrUnsupportedServer, kind, name, strings.TrimSpace(crdb))
	}
	return nil
}
