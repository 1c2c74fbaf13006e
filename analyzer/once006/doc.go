// Package once006 defines an Analyzer that reports promises of the wrong length.
//
// # Analyzer once006
//
// once006: report a request promise around an effect, and a table= insert without its conflict clause
//
// A //once:request promise (or a once.Request guard) lasts one request: it makes several
// callers within a request share one call. A charge, an email or a model call under it
// happens again on the next request — the client's retry, the user's second tab — so the
// promise is the wrong length for it. ONCE006 reports the directive (or the guard call)
// and names the effect; declare a longer promise (provider, forever, open, episode)
// instead. A request memo around reads is what it is for, and is not reported.
//
// With table=, the promise lives on the user's own rows: the function's INSERT is the
// check, and only with the conflict clause oncegen derives from the declaration (the
// generated FConflict constant, e.g. ON CONFLICT (org_id) WHERE status IN ('queued',
// 'running') DO NOTHING), repeated text for text, does PostgreSQL use the declared index.
// ONCE006 reports an insert into the declared table, in the declared function, whose
// constant SQL does not contain that clause.
package once006
