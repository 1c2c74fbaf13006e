// Package once001 defines an Analyzer that reports effects no promise covers.
//
// # Analyzer once001
//
// once001: report a provider call with no //once: promise and no idempotency key
//
// A call that charges a card, sends an email or a message, runs a paid model or sends a
// non-idempotent HTTP request (the provider catalogue lists them) is reported as ONCE001
// when both hold:
//
//   - no promise covers it: the function holding it has no //once: directive, is not
//     called only from functions that have one (in its package, counting a call of an
//     interface's method as a call of the package's implementations), and the call is not
//     in a closure run by a guard of the runtime package (once.Forever[T].Do and the like),
//     nor after a branch on a hand-written latch written in SQL: a cron's task-lock row
//     (INSERT .. ON CONFLICT .. DO UPDATE .. WHERE lock_until < now), a
//     pg_try_advisory_lock, a claim by an UPDATE from the old state (WHERE claimed_by IS
//     NULL), a one-time token consumed by DELETE, a plain INSERT under a primary key or
//     unique constraint of the module's migrations given a key a repeat gives again, whose
//     row count, result or error the code returns on (see the effects package for which
//     statements count);
//   - the call carries no idempotency key the way its provider takes one: Stripe's
//     Params.IdempotencyKey or SetIdempotencyKey, an Idempotency-Key header set with
//     option.WithHeader or on the *http.Request, resend's SendEmailOptions, an SNS
//     MessageDeduplicationId, and so on. Where the key cannot be seen (the params come
//     from the caller or a helper, or are handed to a helper of the package before the
//     call, as is the request, or an option is built by one) the call is given the
//     benefit of the doubt.
//
// A retry of such a call repeats the effect: the customer is charged twice, the email goes
// out twice. Fix it by declaring how long the promise lasts (//once:provider derives the
// provider's key from the row; //once:forever records the outcome), or by passing a key
// derived from a stable id.
//
// Only named effects count: the catalogue's, the application's declared ones, and what
// the module's own functions reach through them. A dependency's internals (a logger with
// a webhook sink, a client constructor, a token exchange) are not effects. An outbound
// request is one only for POST and PATCH (a repeated PUT or DELETE leaves the state one
// left: RFC 9110's idempotent methods), its method traced through the request value;
// token endpoints and verifications are reads, and so is a raw request sent by a
// function named for a read (getDepartments, listUsers, searchTopics), a logout,
// a revocation or an unsubscribe, or by the helpers such a function calls for it,
// unless its name also says it creates or sends (getOrCreateTeam).
//
// Each root cause is reported once, at the function nearest the effect above which no
// promise is held anywhere in the module: a handler, an SDK-style wrapper or a method
// reached only through an interface is judged where it is defined, not at each of its
// eight call sites or three call levels. Where some callers hold a promise, or the
// function is a service shared by several packages, or one of several adapters of an
// interface, the callers that hold none are reported at their calls, and the message
// names the chain of calls down to the provider call. A function is reported once, at
// its first effect, whatever number of effects it reaches: one promise declared on it
// covers them all, and the finding names the others. A helper whose one caller makes an
// effect of its own is part of that caller's decision and is reported with it. A
// transport — a helper sending to the URL, or with the method, its callers give it
// (postJSON(url, body), do(method, path)) — is judged at the one caller that sends a
// request through it that is not a read; where several do, at the helper, once. A
// helper that repeats its request in a loop decides the repeat, and is reported where
// it is. An exported method of the module's own client that passes what it is given
// straight to a provider's SDK (StreamChat(ctx, history)) is judged at the callers that
// decide to call it, and so is one that only sends what it is given: an SMTP client's
// Mail building the message from its arguments, a webhook's Trigger posting its
// argument to the URL it is configured with, with no text and no endpoint of its own.
// So is an agent loop (the model asked again with the tools' results, in a loop an error
// leaves), and an adapter of a port declared in another package (a template mailer
// behind the mailer package's Mailer): the code calling the port decides. A fact carries
// "this function sends an email through (*sesv2.Client).SendEmail" to the packages that
// import it.
//
// Not judged at all: a function named for a deliberate repeat (reOCRPage, resendInvite,
// regenerateAnswer; a retry is not one, nor a name with a word of money: reCharge); an
// HTTP handler that hands its request's question to a model and the answer back while
// the request waits, keeping nothing (no row written, no call of a function named for a
// store, no other effect); a dispatcher whose every effect sits in a branch on a
// parameter equal to a constant, when every call in the module passes a constant no
// branch takes. A plain INSERT under a declared unique key is a latch written by hand
// also when a repository method returns its error, as is or through a known wrapper
// (fmt.Errorf, errors.Wrap, stacktrace.Propagate), to the caller that branches on it.
//
//	func (s *Server) handleRefund(w http.ResponseWriter, r *http.Request) {
//		...
//		s.stripe.V1Refunds.Create(ctx, &stripe.RefundCreateParams{Charge: stripe.String(id)})
//	}
//
// reports "call to (*stripe.Client).V1Refunds.Create has no idempotency key and no
// //once: promise".
//
// An email or a text that carries a secret minted for it — a one-time code or a reset
// link from a random source, in the function or handed to it by every caller in the
// package (ONCE002's tracing finds the source) — is a new message each time: a second
// request asks for a new code, which replaces the first, so it is not reported. It is
// when code before the send tests the clock (a resend interval, time.Since(sentAt) <
// time.Minute, in the function, in a function of the package it calls first, or in a
// caller before its call): the code means to refuse a second send, and two requests
// pass the test together. A throttle tested in another package is not seen.
//
// A call covered by a process-local map or set used as its guard is reported by ONCE003
// instead, which says why that guard is not enough.
package once001
