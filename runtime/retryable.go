package once

import (
	"context"
	"errors"
	"io"
	"net"
	"strings"
	"syscall"

	"github.com/jackc/pgx/v5/pgconn"
)

// Transient SQLSTATEs: the statement or transaction failed as a whole, for a reason a new
// attempt does not meet again (or meets only by bad luck), and nothing of it was kept.
var transientCodes = map[string]bool{
	"40001": true, // serialization_failure
	"40P01": true, // deadlock_detected
	"57P01": true, // admin_shutdown (a restart, a failover, pg_terminate_backend)
	"57P02": true, // crash_shutdown
	"57P03": true, // cannot_connect_now (starting up, shutting down)
}

// retryableError marks an error as ErrRetryable while keeping it what it was.
type retryableError struct{ err error }

func (e retryableError) Error() string        { return e.err.Error() }
func (e retryableError) Unwrap() error        { return e.err }
func (e retryableError) Is(target error) bool { return target == ErrRetryable }

// errClaimLeft marks an error after which a claim may be left open: the clean-up of a claim
// whose outcome was unknown failed. Such an error is never retryable.
var errClaimLeft = errors.New("once: the claim may be left open until the stale window frees the key")

// classify marks err ErrRetryable when it is transient (see transient), left no claim
// behind, and is not an outcome the function chose to record. Guards pass the errors they
// return through it.
func classify(err error) error {
	if err == nil || errors.Is(err, ErrRetryable) || errors.Is(err, errClaimLeft) || !transient(err) {
		return err
	}
	var term terminalError
	if errors.As(err, &term) || errors.Is(err, ErrUncertain) {
		return err
	}
	return retryableError{err}
}

// transient reports whether err is a transient database error: a transient SQLSTATE (class
// 08, connection exception, included), or the connection lost or never made. The caller's
// own context ending is not transient: retrying with the same context fails the same way.
func transient(err error) bool {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) {
		return transientCodes[pgErr.Code] || strings.HasPrefix(pgErr.Code, "08")
	}
	if errors.Is(err, context.Canceled) || errors.Is(err, context.DeadlineExceeded) {
		return false
	}
	return connectionLost(err)
}

// connectionLost reports whether err says the connection to the server failed: never made,
// closed, reset, or ended in the middle of an answer.
func connectionLost(err error) bool {
	var connectErr *pgconn.ConnectError
	var netErr net.Error
	return errors.As(err, &connectErr) || errors.As(err, &netErr) ||
		errors.Is(err, pgconn.ErrConnClosed) || errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF) ||
		errors.Is(err, syscall.ECONNRESET) || errors.Is(err, syscall.EPIPE) || errors.Is(err, net.ErrClosed)
}

// classifyAnswered is classify for a statement whose effect cannot be withdrawn by a token
// (a reservation, a latch, a commit): only an error that says the statement did not take
// effect (the server's own error, or nothing sent) may be retryable. A connection lost while
// it ran leaves its effect unknown, and a retry could double it.
func classifyAnswered(err error) error {
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) || pgconn.SafeToRetry(err) {
		return classify(err)
	}
	return err
}
