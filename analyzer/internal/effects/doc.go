// Package effects is the analysis every oncelint check shares: which calls in a package
// are effects (from the catalogue), which carry an idempotency key, which functions hold
// a //once: promise or are reached only through one, and which perform an effect that no
// promise covers. It exports that knowledge as facts, so a handler calling a helper two
// packages away that sends an email is judged by what the helper does.
//
// # Where a finding goes
//
// An effect is reported in the function that makes the call, unless that function is
// covered: it holds a promise, or every call of it in its package is made under one
// (from a function with a directive, or from a closure run by a runtime guard). A call of
// another function of the package that performs an effect is reported there, not again
// at the call.
//
// An exported function of a library package is judged where it is called instead: its
// effect is exported as a fact, and each package calling it reports the call (or not,
// if the caller holds a promise). So a helper called only from guarded handlers is not
// reported, and one called from an unguarded handler is reported at the handler's call.
// A library function the package itself hands out as a value (an HTTP handler given to a
// mux, a job registered with a queue), one with an HTTP handler's parameters, and every
// function of package main are reported where they are. Test files are never reported.
//
// A call of an interface's method is a call of each method of the package that
// implements it (outside test files): the adapter behind a Mailer interface is covered
// when every call of Mailer.Send in the package is made under a promise, and an
// unguarded call of Mailer.Send is where the adapter's effect is reported when the
// adapter is judged where called.
//
// Closures passed to a guard of the runtime package (once.Forever[T].Do and the like)
// run under that guard's promise.
//
// # SQL
//
// The analysis also reads the SQL each function sends (constant statements given to
// query methods), itself and through the functions it calls, and summarises it for
// callers in a SQLFact: the tables a function reads and returns what it found, the inserts
// and updates it makes, the locks it takes. ONCE005 sees a look-up in one helper decide
// an insert made by another with it, and ONCE003 the insert a per-process set guards.
//
// # Fast path
//
// A package that imports no package named in the catalogue, no package that exports a
// fact, holds no //once: directive and no string that may be SQL, has nothing to report:
// Run returns at once, before walking any function body.
package effects
