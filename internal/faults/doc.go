// Package faults runs once's guards under faults between the application and PostgreSQL
// (connection resets, latency and jitter, half-open connections, partitions, bandwidth
// limits, the server killed and restarted), records every call's invocation and answer, and
// checks the history against each kind's invariant once the faults stop and the stale
// windows have passed.
//
// One seed drives the schedule of faults and the workload's keys, callers and deadlines; a
// failing run prints the seed, the command that replays it, and for each violation the
// shortest sub-history that shows it: the calls on its key and the faults injected while they
// ran. Goroutine scheduling is not seeded, so the history records what happened rather than
// what the seed planned.
//
// It is a module of its own so that the fault proxy (Shopify's toxiproxy, run in-process)
// and its dependencies stay out of once's go.mod.
package faults
