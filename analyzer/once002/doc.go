// Package once002 defines an Analyzer that reports idempotency keys a retry cannot
// reproduce.
//
// # Analyzer once002
//
// once002: report an idempotency key made from the clock or randomness
//
// An idempotency key names a piece of work, so a retry of the same work must send the
// same key. A key made from time.Now, math/rand, crypto/rand or a fresh UUID, ULID, xid
// or KSUID (the catalogue's unstable sources) differs on every attempt: the provider sees
// new work and does it again. ONCE002 reports such a key where it is handed over:
//
//   - a provider's key: a key field or setter the catalogue names (Stripe's
//     IdempotencyKey), a key header set on a request or by an SDK option
//     (Idempotency-Key, Standard Webhooks' webhook-id), the key of a //once:provider
//     promise, once.ProviderKey;
//   - the key of a //once: promise or a runtime guard: a function declared with key=
//     gets its key from its callers' arguments, which are checked at the call.
//
// The value is followed through variables, concatenation, formatting, conversions and
// the module's helpers (a function whose result comes from such a source says so in a
// fact: "ids.New, which returns uuid.NewString"), and a parameter that becomes a key
// makes the callers' arguments keys.
//
// A clock cut to a day or an hour (time.Now().Format("2006-01-02"), Truncate(time.Hour),
// Date()) is a bucket: the canonical key of a per-day counter (//once:statement
// key=org,day) or of an episode, the same on every retry within it, and not reported
// there. A provider's key made from it still is: a retry across the bucket's edge is new
// work to the provider.
package once002
