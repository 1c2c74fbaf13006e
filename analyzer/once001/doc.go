// Package once001 defines an Analyzer that reports effects that run again with no
// promise.
//
// # Analyzer once001
//
// once001: report an effect reached from code that runs again, with no promise
//
// An effect is a call the catalogue names by identity (a charge, an email, a message, a
// push notification, a paid model call), a request sent to an endpoint it names, a call
// of a function the project's catalogue (oncelint.json) names, or a call of a function
// that reaches one of those. ONCE001 reports an effect when both hold:
//
//   - code that runs again reaches it: a handler of an HTTP route or an RPC, a job, queue,
//     webhook or cron handler of a framework the catalogue knows (or that the project's
//     catalogue names), a Temporal activity, what follows a message received from a broker
//     that delivers it again until it is acknowledged, a loop a timer turns (a hand-written
//     scheduler: a wait on a ticker, time.After or time.Sleep in a loop that goes on until
//     stopped), a retry loop (a loop that calls again only after the call failed, or after
//     a literal recorded its failure), a retry helper or a client that retries by itself;
//   - nothing on the way covers it: no //once: promise (of a kind that covers, keyed by
//     values the effect's content derives from), no runtime guard around it, no claim
//     declared with table= taken before it, and no stable idempotency key the way its
//     provider takes one.
//
// A retry, a redelivery, a second tab or a second replica then repeats the effect: the
// customer is charged twice, the email goes out twice. Declare how long the promise lasts
// (//once:provider derives the provider's key from the row; //once:forever records the
// outcome) on the function the finding names, or pass a key derived from a stable id.
//
// With -strict (for code that has adopted once), every catalogued effect no promise
// covers is reported where the package's code is entered, a repeat path or not.
//
// A POST or PATCH to an endpoint no catalogue entry names is in the coverage, reported only
// where the module's own retry repeats it with no idempotency key, its answer unread: HTTP
// does not let a client repeat such a request unasked (RFC 9110, 9.2.2).
//
// An email or a text whose content is made fresh for the call (a one-time code from a random
// source on the way) is new work each time, not a duplicate: only -strict reports it.
//
// An effect a worker started with go makes for each value it receives from a channel a
// struct holds (an in-process queue) is made where a value is sent on that channel.
//
// Each effect is reported once, where it is made: at the call in the function nearest
// the effect, by the package that finds the repeat path (which may be a package calling
// it). An effect reached through an interface whose implementations perform effects is
// reported at the interface call, once, naming them: a promise there covers all of them.
// Implementations in packages the caller does not import are joined with the call by the
// standalone run; go vet alone does not see them. A dependency's call through an interface
// with an implementation beside it that performs none (a logger's console writer beside its
// mail writer) reaches none: the library's configuration chooses. The related positions say
// where the repeat comes from and which promises did not cover it, their key unrelated.
//
// Write //oncelint:read on a function whose request only reads, //oncelint:repeat on one
// whose job is to do it again (a resend), and //oncelint:ignore ONCE001 reason where the
// finding points.
package once001
