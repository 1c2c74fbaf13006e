// Package once006 defines an Analyzer that reports promises of the wrong length or
// mechanism.
//
// # Analyzer once006
//
// once006: report a request promise around an effect, and a table= function whose insert is not its claim
//
// A //once:request promise (or a runtime Request guard) lasts one request: it makes
// several callers within a request share one call. A charge, an email or a model call
// under it happens again on the next request — the client's retry, the user's second
// tab — so the promise is the wrong length for it. ONCE006 reports the directive (or the
// guard call) and names the effect; declare a longer promise (provider, forever, open,
// episode) instead. A request memo around reads is what it is for.
//
// With table=, the promise lives on the user's own rows: the function's INSERT is the
// check. ONCE006 reports, in the declared function:
//
//   - an insert into the declared table whose constant SQL lacks the conflict clause
//     oncegen derives from the declaration (the generated FConflict constant), text for
//     text: without it PostgreSQL does not use the declared index, and a duplicate is an
//     error rather than the no-op the promise needs;
//   - an insert into the declared table sent through another handle than the one the
//     function is given (a pgx.Tx, a *sql.Tx, a once.DB): the guard runs the function in
//     the transaction it passes, and an insert through a pool commits on its own, outside
//     the promise.
package once006
