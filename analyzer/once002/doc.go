// Package once002 defines an Analyzer that reports idempotency keys a retry cannot
// reproduce.
//
// # Analyzer once002
//
// once002: report an idempotency key derived from the clock or randomness
//
// An idempotency key names a piece of work, so a retry of the same work must send the
// same key. A key built from time.Now, math/rand, crypto/rand, a fresh UUID (uuid.New,
// uuid.NewString, uuid.NewV7), a ULID, an xid or a KSUID is different on every attempt:
// the provider sees a new request and does the work again, and the key protects nothing.
// ONCE002 reports such a key where it is handed over: a field or setter the provider
// catalogue lists, of the provider's SDK (Stripe's IdempotencyKey and SetIdempotencyKey,
// SNS's MessageDeduplicationId, resend's SendEmailOptions.IdempotencyKey), an
// Idempotency-Key header, or a key argument of the runtime package (once.ProviderKey, a
// guard's Do). A field of the application's own type with the same name (an outbox row's
// IdempotencyKey) is where a key is kept: it is judged where the key reaches the provider.
//
// The value is followed through local variables, concatenation, fmt.Sprintf, strconv,
// conversions, method calls (uuid.New().String(), time.Now().Format(...)) and helpers:
// a function whose result comes from such a source carries a fact, so a helper in
// another package that returns uuid.NewString() is recognised. A buffer filled from a
// random source (rand.Read(b[:]), io.ReadFull(rand.Reader, buf)) and then hex- or
// base64-encoded is random too.
//
// A key may be handed over by a helper: Post(ctx, path, key, body) sets the header from
// its parameter key. Such a function carries a fact naming the parameters it passes on
// as a key (found through locals, Sprintf and concatenation, and through the helpers it
// calls in turn), so the argument a caller gives there, in this package or another, is
// checked as the key it becomes: p.Post(ctx, "/v1/orders", uuid.NewString(), body) is
// reported at the argument. Only whole parameters of a type a key is made of count (text,
// numbers, bytes, an id, a time); a field of a struct parameter does not.
//
// Not reported:
//
//   - keys derived from stable ids: "refund-" + order.ID;
//   - a timestamp the provider or the row supplies (sub.UpdatedAt is a version of the
//     subscription, the same on every retry) or one passed in as a parameter;
//   - a random key persisted on the row before the call and read back on retry: a field
//     set from uuid.NewString() that is written to the database (an Exec or Save call)
//     before it is used, or a variable scanned back from the row;
//   - a key made in a test file: a test against a provider's sandbox makes a fresh key
//     per run on purpose.
package once002
