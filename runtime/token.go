package once

import (
	"crypto/rand"
	"encoding/hex"
)

// newToken returns a fresh owner token: 128 random bits as 32 lower-case hex characters.
//
// A token proves ownership of a claim or lease. Row ids are guessable and reused by
// operators in psql; a token is only ever known to the process that took the claim, so a
// settle conditioned on it cannot be done by a late or confused worker holding another
// claim's id.
func newToken() string {
	var b [16]byte
	rand.Read(b[:]) // never returns an error (crypto/rand panics if the OS source fails)
	return hex.EncodeToString(b[:])
}

// newOperationID returns a fresh operation id (once.operations.id): a random version 4 UUID
// in PostgreSQL's text form, as gen_random_uuid() draws one. The claim sends it rather than
// leaving the server to draw it, which spares the server the draw and the claim a RETURNING.
func newOperationID() string {
	var b [16]byte
	rand.Read(b[:])         // never returns an error (crypto/rand panics if the OS source fails)
	b[6] = b[6]&0x0f | 0x40 // version 4
	b[8] = b[8]&0x3f | 0x80 // RFC 9562 variant
	t := uuidText(b)
	return string(t[:])
}
