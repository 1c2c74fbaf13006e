package dbcall

import (
	"context"
	"strings"
	"time"
	"unicode/utf8"
)

// Durations travel as whole microseconds (PostgreSQL's interval resolution) and are turned
// into intervals in SQL, so no interval text is parsed and no precision is lost:
//
//	clock_timestamp() + $4::bigint * interval '1 microsecond'

// Micros converts d to whole microseconds for such a statement, rounding up so that a
// positive duration never becomes an empty interval.
func Micros(d time.Duration) int64 {
	us := d / time.Microsecond
	if d%time.Microsecond > 0 {
		us++
	}
	return int64(us)
}

// MicrosOrNil is Micros for a duration where zero means none (for ever): nil, SQL NULL.
func MicrosOrNil(d time.Duration) *int64 {
	if d <= 0 {
		return nil
	}
	us := Micros(d)
	return &us
}

// JSON returns encoded JSON as the parameter of a json column: as text, or nil (SQL NULL)
// for nil. A []byte would do under pgx's default exec mode, which learns the column's type
// from a prepared statement; but in the modes a transaction pooler allows (exec,
// simple_protocol) pgx sends a []byte as bytea text (`\x7b...`), which the json input
// refuses (22P02), and the outcome it carries would go unrecorded.
func JSON(b []byte) any {
	if b == nil {
		return nil
	}
	return string(b)
}

// MaxReasonLen bounds a stored failure reason: enough for an error chain, not for a payload
// an error happened to quote.
const MaxReasonLen = 2000

// Reason makes an error's text storable: valid UTF-8, no NUL (text columns refuse it), at
// most MaxReasonLen bytes. An error's text is whatever its maker put there (a provider's
// answer, quoted); refused by the column, it would leave the outcome it explains unrecorded.
func Reason(s string) string {
	s = strings.ReplaceAll(strings.ToValidUTF8(s, "\uFFFD"), "\x00", "")
	if len(s) <= MaxReasonLen {
		return s
	}
	cut := MaxReasonLen
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}

// SettleTimeout bounds the statements that finish a call's writes after its function
// returned (a settle, a refund, a rearm, a release, a drain's record).
const SettleTimeout = 15 * time.Second

// SettleContext returns the context for those statements. It ignores the caller's
// cancellation: a request cancelled while its function ran must still release its lease,
// refund its reservation or record its outcome, or the promise's state would be left wrong
// until an expiry or a sweep put it right.
func SettleContext(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), SettleTimeout)
}
