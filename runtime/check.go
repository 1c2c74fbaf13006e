package once

import (
	"context"
	"fmt"
)

// checkContext refuses a context that has already ended. A guard that started its claim on a
// dead context would fail half-way, after deciding nothing; refusing first means nothing is
// written. The error wraps both ErrInvalid and the context's own error.
func checkContext(ctx context.Context) error {
	if ctx == nil {
		return fmt.Errorf("%w: nil context", ErrInvalid)
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("%w: context already ended: %w", ErrInvalid, err)
	}
	return nil
}

// checkCall validates what every database-backed guard is called with, before anything is
// sent to the database.
func checkCall(ctx context.Context, db DB, name, key string) error {
	if err := checkContext(ctx); err != nil {
		return err
	}
	if err := checkDB(db); err != nil {
		return err
	}
	return checkNameKey(name, key)
}

// invalid builds an ErrInvalid error that names the kind and guard it is about.
func invalid(kind, name, format string, args ...any) error {
	return fmt.Errorf("%w: %s guard %s: %s", ErrInvalid, kind, name, fmt.Sprintf(format, args...))
}
