package once

import (
	"context"
	"errors"
	"strings"
	"time"
	"unicode/utf8"
)

// settleTimeout bounds the statements that settle a guard after its function has returned
// (finish, fail, refund, rearm, release).
const settleTimeout = 15 * time.Second

// settleContext returns the context for settling after fn returned. It ignores the caller's
// cancellation: a request that was cancelled while its function ran must still release its
// lease, refund its reservation or mark its claim failed, or the promise's state would be
// left wrong until an expiry or a sweep put it right.
func settleContext(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(context.WithoutCancel(ctx), settleTimeout)
}

// callSettled runs fn. If fn panics, undo runs first (on a settle context) and the panic then
// goes on up: a panicking function must not leave its claim open, its units reserved or its
// latch set, any more than one that returned an error.
func callSettled[T any](ctx context.Context, fn func(context.Context) (T, error), undo func(context.Context)) (T, error) {
	returned := false
	defer func() {
		if !returned {
			sctx, cancel := settleContext(ctx)
			defer cancel()
			undo(sctx)
		}
	}()
	v, err := fn(ctx)
	returned = true
	return v, err
}

// errPanicked is what undo is told when the function panicked instead of returning.
var errPanicked = errors.New("the function panicked")

// callUndoing runs fn and, if fn returns an error or panics, runs undo on a settle context
// with that error (errPanicked for a panic): the refund, rearm or failure that says the work
// was not delivered. undo's own error is joined to fn's.
func callUndoing[T any](ctx context.Context, fn func(context.Context) (T, error), undo func(context.Context, error) error) (T, error) {
	v, err := callSettled(ctx, fn, func(sctx context.Context) { undo(sctx, errPanicked) })
	if err == nil {
		return v, nil
	}
	sctx, cancel := settleContext(ctx)
	defer cancel()
	if uerr := undo(sctx, err); uerr != nil {
		return v, errors.Join(err, uerr)
	}
	return v, err
}

// maxReasonLen bounds a stored failure reason (an open claim's, a forever operation's
// recorded error, a follow-up's last error): enough for an error chain, not for a payload an
// error happened to quote.
const maxReasonLen = 2000

// reasonText makes an error's text storable: valid UTF-8, no NUL (text columns refuse it),
// at most maxReasonLen bytes. An error's text is whatever its maker put there (a provider's
// answer, quoted); refused by the column, it would leave the outcome it explains unrecorded.
func reasonText(s string) string {
	s = strings.ReplaceAll(strings.ToValidUTF8(s, "\uFFFD"), "\x00", "")
	if len(s) <= maxReasonLen {
		return s
	}
	cut := maxReasonLen
	for cut > 0 && !utf8.RuneStart(s[cut]) {
		cut--
	}
	return s[:cut] + "…"
}
