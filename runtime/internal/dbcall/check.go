package dbcall

import (
	"context"
	"errors"
	"fmt"
	"reflect"
	"strings"
	"unicode/utf8"
)

// ErrInvalid is once.ErrInvalid: an argument cannot be used. Nothing was written.
var ErrInvalid = errors.New("once: invalid argument")

// The limits of a name and a key, in bytes: once.MaxNameLen and once.MaxKeyLen.
const (
	MaxNameLen = 128
	MaxKeyLen  = 512
)

// Context refuses a context that is nil or has already ended. A call that started on a dead
// context would fail half-way, after deciding nothing; refusing first means nothing is
// written. The error wraps both ErrInvalid and the context's own error.
func Context(ctx context.Context) error {
	if ctx == nil {
		return fmt.Errorf("%w: nil context", ErrInvalid)
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("%w: context already ended: %w", ErrInvalid, err)
	}
	return nil
}

// ContextDB is Context, then DB.
func ContextDB(ctx context.Context, db any) error {
	if err := Context(ctx); err != nil {
		return err
	}
	return DB(db)
}

// DB reports a nil DB, including a typed nil such as a nil *pgxpool.Pool, as ErrInvalid
// rather than a panic deep inside pgx.
func DB(db any) error {
	if what := NilDB(db); what != "" {
		return fmt.Errorf("%w: %s", ErrInvalid, what)
	}
	return nil
}

// NilDB describes db if it is nil, plainly or as a typed nil, and returns "" otherwise.
func NilDB(db any) string {
	if db == nil {
		return "nil DB"
	}
	if v := reflect.ValueOf(db); v.Kind() == reflect.Pointer && v.IsNil() {
		return fmt.Sprintf("nil DB (%T)", db)
	}
	return ""
}

// Name refuses a guard name that is empty, longer than MaxNameLen, not valid UTF-8, or holds
// a control character.
func Name(name string) error {
	switch {
	case name == "":
		return fmt.Errorf("%w: empty guard name", ErrInvalid)
	case len(name) > MaxNameLen:
		return fmt.Errorf("%w: guard name is %d bytes, over the %d-byte limit", ErrInvalid, len(name), MaxNameLen)
	case !Text(name):
		return fmt.Errorf("%w: guard name %q holds control characters or invalid UTF-8", ErrInvalid, name)
	}
	return nil
}

// NameKey is Name, then the refusal of a key that is empty, longer than MaxKeyLen, not valid
// UTF-8 or holds a NUL (which a text column refuses), naming the guard.
func NameKey(name, key string) error {
	if err := Name(name); err != nil {
		return err
	}
	switch {
	case key == "":
		return fmt.Errorf("%w: guard %s: empty key", ErrInvalid, name)
	case len(key) > MaxKeyLen:
		return fmt.Errorf("%w: guard %s: key is %d bytes, over the %d-byte limit", ErrInvalid, name, len(key), MaxKeyLen)
	case !utf8.ValidString(key) || strings.IndexByte(key, 0) >= 0:
		return fmt.Errorf("%w: guard %s: key is not valid UTF-8 text", ErrInvalid, name)
	}
	return nil
}

// Text reports whether s is valid UTF-8 with no control characters.
func Text(s string) bool {
	return utf8.ValidString(s) && !strings.ContainsFunc(s, IsControl)
}

// IsControl reports an ASCII control character or DEL.
func IsControl(r rune) bool { return r < ' ' || r == 0x7f }

// IsUUID reports whether s is a UUID in PostgreSQL's text form (8-4-4-4-12 hex digits): an
// operation's id as an operator or a page gives it back.
func IsUUID(s string) bool {
	if len(s) != 36 {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case i == 8 || i == 13 || i == 18 || i == 23:
			if c != '-' {
				return false
			}
		case !('0' <= c && c <= '9' || 'a' <= c && c <= 'f' || 'A' <= c && c <= 'F'):
			return false
		}
	}
	return true
}
