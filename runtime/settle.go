package once

import (
	"context"
	"errors"

	"github.com/oncekit/once/runtime/internal/dbcall"
)

// callSettled runs fn. If fn panics, undo runs first (on a settle context, which the
// caller's cancellation does not reach) and the panic then goes on up: a panicking function
// must not leave its claim open, its units reserved or its latch set, any more than one that
// returned an error.
func callSettled[T any](ctx context.Context, fn func(context.Context) (T, error), undo func(context.Context)) (T, error) {
	returned := false
	defer func() {
		if !returned {
			sctx, cancel := dbcall.SettleContext(ctx)
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
func callUndoing(ctx context.Context, fn func(context.Context) error, undo func(context.Context, error) error) error {
	_, err := callSettled(ctx, func(ctx context.Context) (struct{}, error) { return struct{}{}, fn(ctx) },
		func(sctx context.Context) { undo(sctx, errPanicked) })
	if err == nil {
		return nil
	}
	sctx, cancel := dbcall.SettleContext(ctx)
	defer cancel()
	if uerr := undo(sctx, err); uerr != nil {
		return errors.Join(err, uerr)
	}
	return err
}
