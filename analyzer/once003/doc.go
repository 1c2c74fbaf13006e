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
// The set may be reached through a function, here or in another package (what the
// function does travels as a fact):
//
//   - a helper that checks and writes a set and answers with a bool — a dedupe set's
//     Seen(key), a limiter's Allow(key), FirstTime(m, key) — called in a condition before
//     the effect, on a set that lasts the process: a package-level variable, a field
//     reached through the receiver, or a variable of func main;
//   - a function that checks and writes a set it is given (sent *sync.Map, seen
//     map[string]bool) before the effect, when a caller in the package hands it such a
//     set: main's sync.Map, passed by pointer to each handler's helper, is reported at
//     the helper's check, naming the caller.
//
// For example, a dedupe set in a package of its own:
//
//	var recent = dedupe.New()
//
//	func alert(mail *resend.Client, incident string) error {
//		if recent.Seen(incident) {
//			return nil
//		}
//		_, err := mail.Emails.Send(...)
//		return err
//	}
//
// A dedupe gate is reported too: a function answering only "go on" that checks an
// in-process set for an incoming message's or event's ID, returns false when it is
// there, and otherwise writes it and returns true, with the check and the write made
// through methods that only check (IfProcessed, answering the lookup's "found") and only
// write (TagProcessed), also behind an interface all of whose implementations in its
// package are such methods. Its callers (a chain of actions, each run only when the one
// before answered true) perform the effect, out of its sight, so it is reported when
// the key names a message or event (msgId, EventID, update_id: what a platform
// redelivers when it got no answer in time) and the package performs an effect no
// promise covers, and when the set outlives a request: a go-cache
// (github.com/patrickmn/go-cache, whose Get, Set and Add count as a set's check and
// writes when the value stored is a marker such as true: one storing a computed value is
// a cache of values, directly in a function too), or a field of a type its package keeps a package-level instance of:
//
//	func (*ProcessedUniqueAction) Execute(a *ActionInfo) bool {
//		if a.handler.msgCache.IfProcessed(*a.info.msgId) {
//			return false
//		}
//		a.handler.msgCache.TagProcessed(*a.info.msgId)
//		return true
//	}
//
// Not a gate: the same shape keyed by a user or a session (a greeting rule, a limiter),
// a write that stores a value (Save(msgID, text): a cache of values), a counter map, a
// gate that sends SQL of its own (a claim beside the set) or returns anything but the
// literal true and false. A check made directly on the set in the gate (rather than
// through such methods) is not yet a gate.
//
// Declare the promise the set was standing in for (//once:forever key=u.ID, or
// //once:episode for an alert that rearms), and keep the set only as a cache in front of
// it if the saved database round trip matters.
//
// The guarded effect may also be an insert (SQL in Exec or Query of pgx, database/sql,
// sqlx or once.DB, sent by the function or by a helper it calls): the in-process lock of
// "check the set, add to it, insert the run row, delete from it" keeps two clicks on one
// replica apart, and none on two. That is reported when the set only holds membership (a
// sync.Map, a set type, a map to bool or struct{}), the insert has no ON CONFLICT and its
// table is not declared with //once: ... table=, and the function sends no claim of its
// own before the insert: an insert with ON CONFLICT, an advisory lock, a row locked FOR
// UPDATE, an update, a serializable transaction. With one of those the set is a cache in
// front of a real claim, and a map of times or counts (a throttle) claims nothing.
//
// Not reported: a set in a function that holds a real promise (a //once: directive, a
// caller that does, a runtime guard's closure, or an effect call carrying a stable
// idempotency key): there it is a cache. A map written only after the effect, with no
// check before it, records and does not guard. A map whose looked-up value the effect
// then uses (c, ok := clients[account], then c.Send) caches what the effect needs: the
// effect happens whether or not the value was there; so does a helper that returns the
// value it caches (a pool's Get(account)) rather than a verdict. A map local to the
// function (deduplicating one batch), or made by it and passed to a helper, lasts no
// longer than the call that owns it, and a set checked in a function with no effect
// after the check is a memo. A function of another package that checks and writes a set
// it is given, then performs the effect itself, is not yet followed: its effect is
// reported where it is called, as ONCE001.
package once003
