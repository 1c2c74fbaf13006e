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
