// Package naive is the outreach app as it was first written: the same HTTP API, the same
// tables, and the mechanisms the story began with, each one the wrong length for its job.
//
//   - Opening a conversation counts the month's conversations and checks for an existing
//     one, then inserts: check-then-insert, with nothing between two requests' checks and
//     inserts.
//   - Queueing a job checks for an open job with the same key, then inserts.
//   - The outreach email, the reply notification, the paid search and the operator alert
//     are posted with no idempotency key: a retry after a lost answer repeats them.
//   - An inbound message is deduplicated by a set in the process's memory, which a second
//     instance, or the same one after a restart, has never seen.
//   - A plan change's idempotency key is made from the clock, so every click is new.
//   - The paid source's daily budget is read, compared, then incremented.
//   - The "source blocked" alert is guarded per day: it repeats every midnight of a long
//     outage, and stays silent about a second outage on the day the first one ended.
//   - The billing webhook applies the state in the event's payload, in the order events
//     arrive.
//
// Hooks lets tests hold requests between a check and the write that follows it, so the
// duplicates these make show up every time, not when the scheduler happens to allow it.
// oncelint reports the bugs it can see in this package; the tests of package outreach
// assert exactly which.
package naive
