// Package catalog is oncelint's table of side effects and of values that change on every
// call: which library functions charge, email, message, call a paid model or send a
// non-idempotent HTTP request, how each takes an idempotency key, and which functions
// return the clock or randomness.
//
// The table is data (providers.json, embedded), keyed by [go/types.Func.FullName] as
// errcheck's exclude lists are: "github.com/stripe/stripe-go/v82/charge.New",
// "(*net/http.Client).Do", "(github.com/resend/resend-go/v2.EmailsSvc).SendWithOptions".
// Behaviour is never guessed from a name: what is not in the table is not an effect.
//
// # Format
//
// A catalogue file is a JSON object with two lists. Each entry of "effects" is one
// function or method:
//
//	{
//	  "func":   "(github.com/stripe/stripe-go/v82.v1RefundService).Create",
//	  "effect": "refunds the payment",
//	  "class":  "payment",
//	  "key":    {"arg": 1, "field": "IdempotencyKey", "setter": "SetIdempotencyKey"}
//	}
//
// effect completes "a retry ... again" in messages; class is one of payment, email,
// message, model or http. key says how the call carries the provider's idempotency key,
// and is absent where the provider takes none:
//
//   - "arg" and "field" (and optionally "setter"): argument arg (counted from 0, the
//     receiver not counted) is a struct or pointer to one whose field (at any depth of
//     embedding) holds the key, or whose setter method sets it;
//   - "header": a request header (such as "Idempotency-Key") set with an option
//     WithHeader(name, value) among the call's arguments, or with Header.Set or
//     Header.Add on the *http.Request the call sends.
//
// An entry may also say "request": {"arg": N, "methods": ["POST", ...]}: the call is an
// effect only when argument N is an *http.Request built in the same function by
// http.NewRequest or http.NewRequestWithContext with one of those methods (a GET sent with
// (*http.Client).Do is no effect).
//
// Each entry of "reads" names something that looks like an effect and is not: a function
// ("func"), a URL prefix ("url") or path ("path"), a string constant that marks a token
// request ("marker"), the first word of the names of functions whose raw HTTP requests
// are checks or reads ("name": verify, validate, get, list, fetch, search, find, lookup),
// or a word anywhere in such a name that says the request ends something ("word": logout,
// revoke, unsubscribe). A name that also says it writes (getOrCreate, fetchAndSend) is not a read's.
//
// Each entry of "unstable" names a function whose result differs on every call, and so
// can never be an idempotency key: {"func": "github.com/google/uuid.NewString"}. A name
// ending in ".*" covers every function and method of that package
// ("math/rand.*").
//
// # Versions
//
// Major-version path elements (/v2, /v82) are ignored when names are compared, so an entry
// written for stripe-go v82 also matches v81 and v83, and one for openai-go matches
// openai-go/v3. So is a receiver's star: "(*pkg.T).M" and "(pkg.T).M" name one method,
// whichever receiver the SDK declares it with.
//
// # Extending
//
// [Load] reads extra files in the same format (oncelint's -catalog flag, or the
// golangci-lint setting catalog); their entries are added to the built-in ones and replace
// a built-in entry of the same name.
package catalog
