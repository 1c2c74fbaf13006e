// Package once003 defines an Analyzer that reports process-local sets used as the guard
// of an effect.
//
// # Analyzer once003
//
// once003: report a map, sync.Map or cache used as the only guard of an effect
//
// A set that lasts the process — a package-level map, sync.Map or go-cache, or one held
// in a field of the method's receiver — checked and written in a function that then
// performs an effect no promise covers, is a guard that lasts one process: a restart
// forgets it, a second replica never saw it. ONCE003 reports the check:
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
// A function that answers a bool from such a check and write (a dedupe set's Seen) is
// the same guard at its callers: a fact says so, and the caller's branch on it is
// reported. A map local to the function lasts no longer than the call, and a set checked
// in a function that holds a promise is a cache in front of it: neither is reported.
//
// Declare the promise the set stands in for (//once:forever key=u.ID, or //once:episode
// for an alert that rearms), and keep the set as a cache in front of it if the saved
// round trip matters.
package once003
