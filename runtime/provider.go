package once

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"strings"
	"time"

	"github.com/oncekit/once/runtime/internal/dbcall"
)

// ProviderKey derives the idempotency key a provider (a payment API, an email API) is given
// for the work named by key: "prefix-key". A retry of the same work derives the same text,
// in every process, so the provider recognises it and does not do the work again.
//
// The result is printable ASCII only, so it is safe in an HTTP header: every byte of prefix
// and key outside '!' to '~', and '%' itself, is written as %XX (upper-case hex). Keys made
// by Key from integers, UUIDs and plain names come out unchanged. A result over
// MaxProviderKeyLen bytes is shortened, stably: its first 222 bytes, '~', and 32 hex digits
// of the SHA-256 of the whole unshortened text, so two long keys that share a beginning still
// differ.
//
// Prefix should name the effect ("charge", "welcome-email"): two effects of one row need
// two keys, or the provider answers the second with the first one's result.
func ProviderKey(prefix, key string) string {
	var b strings.Builder
	b.Grow(len(prefix) + 1 + len(key))
	writeHeaderSafe(&b, prefix)
	b.WriteByte('-')
	writeHeaderSafe(&b, key)
	s := b.String()
	if len(s) <= MaxProviderKeyLen {
		return s
	}
	sum := sha256.Sum256([]byte(s))
	const digest = 32
	return s[:MaxProviderKeyLen-1-digest] + "~" + hex.EncodeToString(sum[:])[:digest]
}

func writeHeaderSafe(b *strings.Builder, s string) {
	const hexDigits = "0123456789ABCDEF"
	for i := 0; i < len(s); i++ {
		c := s[i]
		if c < '!' || c > '~' || c == '%' {
			b.WriteByte('%')
			b.WriteByte(hexDigits[c>>4])
			b.WriteByte(hexDigits[c&0xf])
			continue
		}
		b.WriteByte(c)
	}
}

// WithProviderKey returns a context carrying k as the provider idempotency key for the
// effect run with it.
func WithProviderKey(ctx context.Context, k string) context.Context {
	return context.WithValue(ctx, providerKeyKey, k)
}

// ProviderKeyFrom returns the provider idempotency key in ctx, put there by a Provider guard
// or WithProviderKey, or, inside a Forever guard's function, the operation's own
// (Attempt.ProviderKey of the guard's name). The effect passes it to the provider (Stripe's
// Idempotency-Key header, an email API's idempotency option).
func ProviderKeyFrom(ctx context.Context) (string, bool) {
	switch v := ctx.Value(providerKeyKey).(type) {
	case string:
		return v, v != ""
	case *Attempt: // a Forever guard's function: the key is derived when asked for
		return v.ProviderKey(v.call.name), true
	}
	return "", false
}

// Provider is the promise "once at the far end": the provider itself refuses to do the same
// work twice for one idempotency key. It is the only promise that survives the case where the
// provider did the work and the answer was lost on the way back (a retry of an email whose
// send succeeded but whose write did not): every database-side promise is on this side of
// that gap.
//
// It runs no SQL. Do derives the key from the guard's Prefix and the work's key, and gives it
// to the function in its context; the function must pass it to the provider.
type Provider struct {
	// Prefix names the effect, and is the first part of the provider key.
	Prefix string
	// TTL documents how long the provider remembers a key (Stripe: at least 24 hours). A
	// retry later than that is a new request to the provider; a longer promise needs one of
	// the database-backed guards in front. Zero means the provider's window is not stated.
	TTL time.Duration
}

// Do runs fn with ProviderKey(Prefix, key) in its context (ProviderKeyFrom) and returns
// Outcome{Status: Ran, ProviderKey: the provider key}. Every call runs fn: the provider, not
// this process, decides whether a request with that key is new.
func (g Provider) Do(ctx context.Context, key string, fn func(context.Context) error) (Outcome, error) {
	if err := dbcall.NameKey(g.Prefix, key); err != nil {
		return Outcome{}, err
	}
	if err := checkGuardContext(ctx, "provider", g.Prefix); err != nil {
		return Outcome{}, err
	}
	switch {
	case fn == nil:
		return Outcome{}, invalid("provider", g.Prefix, "nil function")
	case g.TTL < 0:
		return Outcome{}, invalid("provider", g.Prefix, "negative TTL %v", g.TTL)
	}
	k := ProviderKey(g.Prefix, key)
	err := fn(WithProviderKey(ctx, k))
	return Outcome{Status: Ran, ProviderKey: k}, err
}
