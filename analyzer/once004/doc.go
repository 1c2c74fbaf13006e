// Package once004 defines an Analyzer that reports calls bypassing a generated guard.
//
// # Analyzer once004
//
// once004: report a direct call of a declared function that bypasses its guard
//
// oncegen writes, beside each function declared with a //once: directive, a wrapper
// (F gets FOnce) that claims the promise before running F. Calling F itself skips the
// claim: the promise holds only for the callers that remember the wrapper. ONCE004
// reports such a call, in the function's own package or (through a fact) in any other,
// and suggests calling the wrapper instead:
//
//	err := SendWelcome(ctx, user)
//
// becomes
//
//	_, err := SendWelcomeOnce(ctx, db, user)
//
// where db is the once.DB in scope (a parameter, or a field of the receiver). The fix is
// offered only where it is mechanical: the call is a statement or the right side of an
// assignment, the wrapper exists, and exactly one value in scope can serve as its DB.
//
// Calls inside generated files (the wrapper itself) and in _test.go files (tests of the
// function's body) are not reported.
package once004
