// Package once003 defines an Analyzer that reports process-local sets used as the guard
// of an effect.
//
// # Analyzer once003
//
// once003: report a map, set or sync.Map used as the only guard of an effect
//
// A package-level map (or set, or sync.Map), or a field of a long-lived struct reached
// through the method's receiver, that is checked and written in a function that then
// performs an effect, is a guard that lasts one process: a restart forgets it, a second
// replica never saw it, and two goroutines can pass the check together unless a lock
// covers it. ONCE003 reports the check:
//
//	var sent sync.Map
//
//	func (n *Notifier) Welcome(ctx context.Context, u User) error {
//		if _, loaded := sent.LoadOrStore(u.ID, true); loaded {
//			return nil
//		}
//		return n.mail.Send(ctx, u.Email, "Welcome", body)
//	}
//
// Declare the promise the set was standing in for (//once:forever key=u.ID, or
// //once:episode for an alert that rearms), and keep the set only as a cache in front of
// it if the saved database round trip matters.
//
// Not reported: a set in a function that holds a real promise (a //once: directive, a
// caller that does, a runtime guard's closure, or an effect call carrying a stable
// idempotency key): there it is a cache. A map written only after the effect, with no
// check before it, records and does not guard. A map local to the function (deduplicating
// one batch) lasts no longer than the call that owns it, and a set checked in a function
// with no effect after the check is a memo.
package once003
