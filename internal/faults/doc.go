// Package faults runs once's guards under faults between the application and PostgreSQL
// (connection resets, latency and jitter, half-open connections, partitions, bandwidth
// limits, the server killed and restarted), records every call's invocation and answer, and
// checks the history against each kind's invariant once the faults stop and the stale
// windows have passed.
//
// Beside the guards an operator loop takes onceops' actions on the same keys, through the
// same faults: it resolves uncertain operations (and resolves settled ones again, which must
// be refused), forces leases free, rearms episodes, refunds and resets allowances, sweeps
// and reaps, each audited with its call's id, so the checker ties every audit row to the call
// that wrote it. The follow-up workload's operations enqueue follow-ups as they settle, drains
// deliver them to the fake provider under the same faults, some fail until they are dead, and
// the operator loop mends and revives those; after recovery a final drain runs within the
// bound of the drains' hold and backoffs.
//
// The run's cancel requests (pgx sends one whenever it gives a connection up mid-statement)
// go to the server or pooler straight, not through the faults: PgBouncer before 1.20.1 exits
// when a cancel request's client goes away before the cancel was forwarded.
//
// One seed drives the schedule of faults (kinds, sizes, streams, timing, and the jitter of
// the latency fault, drawn from the seed rather than toxiproxy's unseeded source) and the
// workload's keys, callers and deadlines; a failing run prints the seed, the command that
// replays it, and for each violation the shortest sub-history that shows it: the calls on
// its key and the faults injected while they ran. Goroutine scheduling is not seeded, so the
// history records what happened rather than what the seed planned.
//
// It is a module of its own so that the fault proxy (Shopify's toxiproxy, run in-process)
// and its dependencies stay out of once's go.mod.
package faults
