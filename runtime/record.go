package once

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"fmt"
	"reflect"
)

// Record says what a Forever guard records of a successful call's value (ForeverValue), and
// so what a duplicate call gets back. The zero value records the value itself.
type Record uint8

const (
	// RecordValue records the value as JSON, passed through the guard's Seal when it has
	// one; a duplicate gets the value back, decoded (after Open).
	RecordValue Record = iota
	// RecordNothing records that the call was done, and nothing of its value; a duplicate
	// gets the zero value of its type, with the Duplicate outcome.
	RecordNothing
	// RecordDigest records the SHA-256 of the value's canonical JSON (as Fingerprint
	// computes it), so an operator can tell two results apart without reading either; a
	// duplicate gets the zero value of its type, with the Duplicate outcome.
	RecordDigest
)

// Sealer is what a Forever guard (its Seal field) passes a recorded value through: Seal
// before the value is written, Open when a duplicate replays it. plain is the value's JSON;
// what Seal returns is stored as it is (as a JSON string of its base64) and given back to
// Open unchanged, so Open must return JSON that decodes into the guard's result type.
//
// An encryption (AES-GCM with a key the application holds) makes a sealed value unreadable
// in the database; a redaction drops or masks the secret fields in Seal and returns what it
// is given in Open, so a duplicate gets the value without them. The runtime ships no crypto
// of its own and holds no keys: see the package's examples for both.
//
// When Seal fails, the operation is recorded done without its result, with a reason that
// leaves Seal's error out (it may quote the value); that error goes to the call that ran.
type Sealer interface {
	Seal(ctx context.Context, plain []byte) ([]byte, error)
	Open(ctx context.Context, sealed []byte) ([]byte, error)
}

// The forms of a recorded result, as stored in once.operations.result_form; a plain value,
// or none at all (Do), is NULL.
const (
	formSealed = "sealed"
	formDigest = "digest"
	formNone   = "none"
)

// formArg is a result form as a statement's argument: NULL for a plain result.
func formArg(form string) any {
	if form == "" {
		return nil
	}
	return form
}

// atRest returns what is stored of a successful call's value under a guard that does not
// record it plainly (RecordNothing is answered by its caller): its digest, or its JSON passed
// through the Sealer, and the result's form. When nothing can be stored (the value cannot be
// encoded, Seal failed, the sealed value is over MaxResult), result is nil and text says why;
// the operation is recorded done without it, as a result over MaxResult is, and notRecorded
// is the error the call that ran gets. A Sealer's error goes to that caller only, never into
// the row: it may quote the value it could not seal.
func (p *foreverCall) atRest(ctx context.Context, id string, v any) (result []byte, form, text string, notRecorded error) {
	fail := func(why string, cause error, store bool) ([]byte, string, string, error) {
		if cause == nil {
			return nil, "", why, fmt.Errorf("%w: %s: operation %s: %s (recorded done without it)", ErrResultTooLarge, p.what(), id, why)
		}
		text := why
		if store {
			text += ": " + cause.Error()
		}
		return nil, "", text, fmt.Errorf("%w: %s: operation %s: %s (recorded done without it): %w", ErrResultTooLarge, p.what(), id, why, cause)
	}
	if p.record == RecordDigest {
		// Encoded first on its own: canonicalJSON's errors are an input's (ErrInvalid), and
		// this value is a result whose effect has happened.
		if _, err := json.Marshal(v); err != nil {
			return fail("result could not be encoded for its digest", err, true)
		}
		c, err := canonicalJSON(v)
		if err != nil {
			return fail("result could not be put in canonical form for its digest", nil, false)
		}
		sum := sha256.Sum256(c)
		return []byte(`"` + hex.EncodeToString(sum[:]) + `"`), formDigest, "", nil
	}
	enc, err := json.Marshal(v)
	if err != nil {
		return fail("result could not be encoded", err, true)
	}
	sealed, err := p.sealer.Seal(ctx, enc)
	if err != nil {
		return fail("result could not be sealed", err, false)
	}
	stored := make([]byte, 0, base64.StdEncoding.EncodedLen(len(sealed))+2)
	stored = append(stored, '"')
	stored = base64.StdEncoding.AppendEncode(stored, sealed)
	stored = append(stored, '"')
	if len(stored) > p.maxResult {
		return fail(fmt.Sprintf("sealed result of %d bytes is over the %d-byte limit and was not recorded; record the work in your own table and return its id", len(stored), p.maxResult), nil, false)
	}
	return stored, formSealed, "", nil
}

// openSealed reads back a result recorded sealed: the JSON string of its base64, through the
// guard's Sealer's Open, into a T. An error changes nothing: the row stays as it is.
func openSealed[T any](ctx context.Context, p *foreverCall, row *operationRow) (T, error) {
	var v T
	if p.sealer == nil {
		return v, fmt.Errorf("once: %s: operation %s: its result was recorded sealed, and the guard has no Seal to open it with", p.what(), row.id)
	}
	var text string
	if err := json.Unmarshal(row.result, &text); err != nil {
		return v, fmt.Errorf("once: %s: operation %s: sealed result is not a JSON string: %w", p.what(), row.id, err)
	}
	sealed, err := base64.StdEncoding.DecodeString(text)
	if err != nil {
		return v, fmt.Errorf("once: %s: operation %s: sealed result is not base64: %w", p.what(), row.id, err)
	}
	plain, err := p.sealer.Open(ctx, sealed)
	if err != nil {
		return v, fmt.Errorf("once: %s: operation %s: recorded result could not be opened: %w", p.what(), row.id, err)
	}
	if err := json.Unmarshal(plain, &v); err != nil {
		return v, fmt.Errorf("once: %s: operation %s: opened result cannot be read as %s: %w",
			p.what(), row.id, reflect.TypeFor[T](), err)
	}
	return v, nil
}
