package once

import (
	"context"
	"fmt"

	"github.com/oncekit/once/runtime/internal/dbcall"
)

// checkCall validates what a database-backed call is given, before anything is sent to the
// database: a context that has not ended, a DB, a valid name and key. Every refusal wraps
// ErrInvalid.
func checkCall(ctx context.Context, db DB, name, key string) error {
	if err := dbcall.ContextDB(ctx, db); err != nil {
		return err
	}
	return dbcall.NameKey(name, key)
}

// checkGuardCall is checkCall for a guard of the given kind, with messages that name the
// kind and the guard ("once: invalid argument: lease guard ideas.Lock: nil DB").
func checkGuardCall(ctx context.Context, db DB, kind, name, key string) error {
	if err := dbcall.NameKey(name, key); err != nil {
		return err
	}
	return checkGuardHandle(ctx, db, kind, name)
}

// checkGuardHandle validates the context and DB of a call on a guard's handle (a claim, a
// lease), naming the guard.
func checkGuardHandle(ctx context.Context, db DB, kind, name string) error {
	if err := checkGuardContext(ctx, kind, name); err != nil {
		return err
	}
	if what := dbcall.NilDB(db); what != "" {
		return invalid(kind, name, "%s", what)
	}
	return nil
}

// checkGuardContext refuses a context that is nil or has already ended, naming the guard. A
// guard that started its claim on a dead context would fail half-way, after deciding
// nothing; refusing first means nothing is written. The error wraps both ErrInvalid and the
// context's own error.
func checkGuardContext(ctx context.Context, kind, name string) error {
	if ctx == nil {
		return invalid(kind, name, "nil context")
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("%w: %s guard %s: context already ended: %w", ErrInvalid, kind, name, err)
	}
	return nil
}

// invalid builds an ErrInvalid error that names the kind and guard it is about.
func invalid(kind, name, format string, args ...any) error {
	return fmt.Errorf("%w: %s guard %s: %s", ErrInvalid, kind, name, fmt.Sprintf(format, args...))
}

// CheckName reports whether name may name a guard, by the rule every guard applies to its
// name on each call: 1 to MaxNameLen bytes of valid UTF-8 with no control characters. The
// error wraps ErrInvalid. A package that takes a name in its configuration (oncehttp.New)
// calls it to refuse a bad name at once, rather than on every call after.
func CheckName(name string) error { return dbcall.Name(name) }
