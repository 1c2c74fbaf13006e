// Package once000 defines an Analyzer that reports malformed //once: directives and
// //oncelint:ignore comments.
//
// # Analyzer once000
//
// once000: report malformed //once: directives and //oncelint:ignore comments
//
// Directives are parsed by the one parser oncegen also uses, and each mistake is
// reported at its file:line:col with exactly the text oncegen prints: an unknown kind
// (with the nearest valid one), an unknown, repeated or missing argument, a bad duration
// or number, two directives on one function, a directive on something that is not a
// function, an identifier that is not a plain SQL identifier. Each well-formed directive is
// then checked against the package's types, again by oncegen's own check: a key=, scope=,
// fingerprint=, cap= or n= expression that does not type-check in the function's scope, a
// key the runtime cannot encode (or a fingerprint encoding/json cannot), a key read from the
// clock or a random source, and a signature the guard cannot wrap (no context first, no
// pgx.Tx where the guard supplies one, results other than error or (T, error)). A function
// whose directive is malformed holds no promise, so its effects are judged as if it had
// none.
//
// An //oncelint:ignore comment that names no check or an unknown one, gives no reason, or
// is attached to nothing, is reported too: it silences nothing; and so is an
// //oncelint:read or //oncelint:repeat declaration with no reason or outside a
// function's doc comment. Each message ends with the code, (ONCE000), under go vet too.
package once000
