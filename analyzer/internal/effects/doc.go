// Package effects is the analysis every oncelint check shares: which calls in a package
// are effects (from the catalogue), which carry an idempotency key, which functions hold
// a //once: promise or are reached only through one, and which perform an effect that no
// promise covers. It exports that knowledge as facts, so a handler calling a helper two
// packages away that sends an email is judged by what the helper does.
//
// # What an effect is
//
// An effect is named, never guessed: a call of a function the catalogue lists (a charge,
// an email, a message, a paid model call, an outbound request that changes state), a
// function declared with a //once: directive, and a function of the module being
// analysed that reaches one of those without a promise (an EffectFact carries it to the
// packages that call it). A dependency's internals are not effects unless the catalogue
// names them: a logger that may post to a webhook, a client constructor, a session read
// that logs, an OAuth token exchange inside a library export no fact.
//
// The module is known from the build (see inModule): go vet's configuration and
// go/packages say which module each package belongs to and at which version. The main
// module and the modules of a go.work workspace have none; a dependency has one, even
// when replaced by a directory. Only packages of version-less modules export effect
// facts; with no module information (GOPATH mode), packages outside the Go root and the
// module cache do.
//
// An outbound net/http request is an effect only when a repeat of it changes state again:
// POST and PATCH. A PUT stores the state it carries and a DELETE removes what it names,
// so a second one leaves what the first left (RFC 9110's idempotent methods). The method is traced through the request value: the method
// argument of http.NewRequest(WithContext) (a constant, or a variable's last assignment
// before the call), a later req.Method = ..., req.WithContext and req.Clone; a request
// variable reused for a GET is a GET. A helper taking the method or the request as a
// parameter makes its callers decide: a call passing a POST is the effect, one passing
// a GET is not (across packages too, through the fact's Cond); one also given the URL
// makes no effect for a caller sending to a URL the catalogue lists as a read. http.Post and PostForm
// are POSTs; http.Get is no effect. The catalogue's reads exempt token endpoints, captcha
// and code verifications (by URL prefix, URL path, a marker such as "grant_type" in the
// sending function, or the sending function's name: verify..., validate..., get...,
// list..., fetch..., search..., find..., lookup..., or logout, revoke or unsubscribe
// anywhere in it, unless the name also says it creates or sends). Such a name covers the
// calls it makes too: a function of the package it calls whose every effect is a raw
// request serves the same purpose (the list action an Unsubscribe asks a helper for),
// unless the callee's own name says it creates or sends (notifyFailure, capturePayment);
// a helper only such calls reach is no effect, and the same holds for a transport of
// another package given the method.
//
// A helper of the package that sends to the URL it is given (a parameter, or a value
// built from one with nothing of the helper's own path in it) is a transport, conditional
// on its callers like a helper given the method: a caller sending to a read URL, or named
// for a read, makes no effect; one sending elsewhere activates it.
//
// # Where a finding goes
//
// Once per root cause, at the function nearest the effect above which no promise is
// held in the module. The analysis reads which functions of the module call the
// package's exported functions (callerIndex: the module's other packages, parsed without
// types, method calls matched by name in files importing the package; a promise held
// above a call of a method covers the methods of that name declared in the calling
// package or a package it imports, not every method of the module so named), so:
//
//   - a function called by nobody in the module (a handler, an SDK-style wrapper, a
//     method reached only through an interface from another package, a function handed
//     out as a value or called from a closure handed out, such as a route's handler) is
//     judged where it is defined; a closure given to a wait group's Go, an errgroup's
//     Go or a once's Do is not handed out: it runs as part of the function that gives
//     it, whose callee the functions it calls stay;
//   - a function some of whose callers (transitively, across the module) hold a promise
//     is judged at the calls of the callers that hold none;
//   - a function called from two or more packages (the module's own mail or SMS
//     service), and two or more implementations of one interface method that perform an
//     effect (adapters of one port), are judged at each caller's call: each caller
//     decides what is sent; a helper only such functions call is judged with them;
//   - a transport (a helper of the package given the method or the URL, see above) that
//     one function activates is judged at that function's call: it decides what is sent.
//     Several activating it, it is judged where it is, once. One that repeats its request
//     in a loop is no transport: the loop is its own decision;
//   - an exported function that calls a provider's SDK (not a raw HTTP request), or a
//     function of its own package, unconditionally (a statement of its body, not in a
//     branch or a loop) with only what it is given (its parameters, its receiver's
//     fields, constants, and values built from them without calling anything but
//     conversions and builtins) is a wrapper, the module's own client of the provider:
//     when the module calls it, it is judged at those calls like a shared service. An
//     agent loop is one too: after its unconditional call, the same call again in a loop
//     whose error leaves the function (`if err != nil { return }`) is a further turn of
//     the conversation its caller started (the tools' results sent back), not a retry;
//     a loop that calls again after an error is a retry loop, its own decision;
//   - so is an exported function that sends only what it is given (sendsGiven): an email
//     or a message that takes no key from its params, or a request to a URL it is given
//     (its receiver's or a parameter, no path of its own), made unconditionally and not
//     in a loop, with arguments built from its parameters, its receiver and constants
//     through the standard library, the provider's message builders (gomail.NewMessage,
//     NewDialer) and the methods of the values so built (SetHeader, MarshalJSON), and no
//     text of its own in them (a Subject: "Upgrade" is a decision). An SMTP client's
//     Mail, a webhook's Trigger or a messenger's Push decides neither whether nor what it
//     sends; called through an interface the module's callers hold, it is judged nowhere
//     this package can see, rather than where it is defined. A helper given the method
//     is a transport (below), and one whose provider takes a key in its params is a
//     wrapper's to key;
//   - an exported method that implements an interface of another package of the module
//     (a template mailer behind the mailer package's Mailer) and is called from other
//     packages, never its own, is an adapter of that port: whatever text it writes, the
//     code calling the port decides whether to send, and is judged there (the caller
//     index matches other packages' method calls by name, so an unrelated method of the
//     same name called elsewhere can make an adapter look called);
//   - an implementation of an interface whose effects are all reported in other
//     packages is no adapter of the interface's caller: the one implementation that
//     decides an effect is judged where it is;
//   - a function whose one caller in the package makes an effect of its own (a provider
//     call, or another package's function whose effect is not reported further down) is
//     part of that caller's decision, and judged with it;
//   - an effect already reported further down (Settled, or a fact's Reported) is not
//     reported again by the functions above it, however many call it. A function that
//     reaches such an effect and another one reported nowhere below is judged for the
//     other, and its finding and its fact name that one (the account deletion that
//     reaches a cancellation email reported in its own package is named for what else it
//     sends).
//
// A function named for a deliberate repeat (catalog.RedoName: reOCRPage, resendInvite,
// regenerateAnswer; not a retry, nor a name with a word of money: reCharge) is not
// judged itself: its name says that doing it again
// is its job. The code that calls it is judged as usual.
//
// An HTTP handler that nothing in the module calls (net/http's shape, a gin, echo or
// fiber context, or a beego controller's method), every effect of which is a model call
// made while the request waits (no goroutine on the way, no closure handed out), and
// which writes no row itself or through what it calls (no INSERT, UPDATE or DELETE, and
// no call outside the standard library of a function named for a store: addMessage,
// saveResult, a cache's Set), is not
// judged either: it hands its request's question to the model and the answer back to
// whoever asked, and keeps nothing, so a repeated request is a new question whose
// retries the requester owns, as a GET's. One that stores the answer, answers later, or
// also emails, messages or charges, is.
//
// A dispatcher, every effect of which is made in a branch on one parameter equal to a
// constant (`if by == ByEmail`, a switch's case), makes none when every call of it in the
// module, in its package and in those importing it, passes a constant no branch takes
// (Notify(ByAll, ..) where only ByEmail and ByPusher are handled): it is no effect. A
// function that calls itself, assigns the parameter or falls through a case is no
// dispatcher, nor is a method (other packages' calls of it are matched by name alone).
//
// A function that holds a promise, or every call of which in the module is made under
// one, is covered. Test files are never reported and their calls do not count.
//
// A call of an interface's method is a call of each method of the package that
// implements it (outside test files); an interface of another package of the module
// carries its implementations' effect as a fact on its method. An interface whose
// implementations live in packages its own cannot see (the SMTP client behind
// mailer.Client, in a package importing mailer) carries none: its callers look in the
// module packages they import, directly or not, for types implementing it, and take the
// effect their method's fact carries.
//
// Closures passed to a guard of the runtime package (once.Forever[T].Do and the like)
// run under that guard's promise.
//
// # Hand-written latches
//
// A promise can be written by hand in SQL: a statement a repeat refuses, whose outcome
// decides whether the effect runs. sqltext marks such statements (Stmt.Refuses): a lease
// row taken by INSERT .. ON CONFLICT .. DO UPDATE .. WHERE lock_until < $now, a
// pg_try_advisory_(xact_)lock, an insert ON CONFLICT DO NOTHING, a DELETE (of a one-time
// token), and an UPDATE, or an upsert's DO UPDATE, whose WHERE tests the old value of a
// column it sets in a way the new value fails (claimed_by IS NULL, paid = false beside
// SET paid = true, a range test such as a lease's). So is a plain INSERT (no ON
// CONFLICT) made by a statement of the function's body, not a branch or a loop, into a
// table whose primary key or unique constraint, declared in the module's migrations or
// schema files (see package schema), covers columns given values a repeat gives again
// (the function's parameters and receiver, constants, and strings formatted from them;
// not a UUID, a random token or the clock): its error is the repeat's unique violation,
// "make the insert the check" written by hand. A function that sends one and returns
// its outcome — a bool made from the row count (res.RowsAffected() == 1), a try-lock's
// scanned bool, the error of a RETURNING row's Scan, or a non-nil error when no row
// changed, or the insert's error itself as its last statement and only return, as is or
// through a known wrapper (fmt.Errorf, errors.Wrap and its kin, stacktrace.Propagate),
// with no other assignment to it (a repository's Insert) — is a latch, and so is one
// that returns a latch's outcome (TryLock over AcquireLock); a LatchFact carries that to
// other packages. Code after a branch on the
// outcome that leaves the block (`if !taken { return }`, `if n == 0 { continue }`, `if
// err := claim(); err != nil { return err }`), or inside a branch that does not leave it
// (`if taken { ... }`), runs under a latch guard:
//
//   - its effects are covered (ONCE001), and a function all of whose calls in the module
//     are made under one is covered too; the caller index sees a call of another package
//     made after a branch on a function this package knows to be a latch (its own, or
//     one of the packages it imports);
//   - the SQL it sends is guarded, so a check-then-insert there is no race (ONCE005): no
//     second run of it checks the same row at the same time.
//
// A latch is a promise of one caller's making: a function some of whose calls are made
// under one and others not is still judged where it is, not moved to the callers without
// one. What is no latch: an UPDATE that only names its row (SET is_cancelled = true WHERE
// user_id = $1 passes again), one that compares the old state with a parameter (state =
// ANY($4) beside SET state = $1: the caller may allow the new state as an old one), a
// latch whose outcome is ignored, a blocking lock (it serialises, it refuses nothing), and
// an insert ON CONFLICT DO NOTHING given a value read from the clock (a row per day is a
// once-a-day limit, a promise shorter than the effect's). The branch's sense is not
// checked: `if !taken { send() }` is taken for `if taken { send() }`.
//
// # SQL
//
// The analysis also reads the SQL each function sends (constant statements given to
// query methods), itself and through the functions it calls, and summarises it for
// callers in a SQLFact: the tables a function reads and returns what it found, the inserts
// and updates it makes, the locks it takes. ONCE005 sees a look-up in one helper decide
// an insert made by another with it, and ONCE003 the insert a per-process set guards.
//
// # Process-local sets
//
// A long-lived map, set (a type with a membership check and an add), sync.Map or
// go-cache Cache (github.com/patrickmn/go-cache: Get looks up, Set and SetDefault write,
// Add does both, failing when the key is there; a write counts only when the value it
// stores is a marker, a constant or struct{}{}, since a go-cache storing what was
// computed is a cache of values), checked then written before an effect,
// is a guard lasting one process (LocalGuard, reported by ONCE003). Methods reach such a
// set through facts: a SetHelperFact marks one that checks and writes it and answers with
// a bool (Seen, Allow); a SetAccessFact one that only checks it, answering with the
// lookup's "found" alone (IfProcessed), or only writes it with the key alone and returns
// nothing but an error (TagProcessed). An interface method carries a SetAccessFact when
// every implementation in its package is the same kind of access. The fact says whether
// the set outlives a request: a go-cache does by design, a map does when the package
// keeps an instance of the receiver's type in a package-level variable.
//
// A dedupe gate (findGates) is a function answering only bool whose body is "if
// X.Check(key) { return false }; X.Write(key); return true" through such accesses of one
// lasting set (the same receiver expression and key on both), with no other return and
// no SQL of its own: the answer "go on, first time" that its callers run the work
// behind. The work is out of its sight (a chain of actions, a dispatcher behind an
// interface), so it is a LocalGuard only when the key names an incoming message or event
// (msgId, eventID, MessageID, update_id, *in.msgID, m.GetMessageId()), which a platform
// redelivers, and the package performs an effect no promise covers; the effect named is
// the first in a method of the same name on another type (the chain's later action), or
// else the package's first. A write that stores a value (a second argument) is a cache of
// values; a counter map, and a key naming a user or a session, make no gate.
//
// # Fast path
//
// A package that imports no package named in the catalogue, no package that exports a
// fact, holds no //once: directive and no string that may be SQL, has nothing to report:
// Run returns at once, before walking any function body.
package effects
