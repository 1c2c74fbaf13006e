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
// that wrote it.
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
