// Command throughput measures once's guards from outside, as an application calls them: in
// one interleaved run on a throwaway PostgreSQL with PostgreSQL's default durability, 8
// workers on one pool of 8 connections per scenario call each guard on fresh keys and in
// storms of 1,000 attempts on one key, beside the bare floor (a) `INSERT .. ON CONFLICT DO
// NOTHING`, each guard's bare twin (the SQL it wraps, written by hand the plain way), the
// floor's insert made twice in a call (two round trips and two commits, the bound of a guard
// that claims and settles), River's unique insert, and River's insert with its job's completion. It prints each scenario's
// calls per second, its ratios to (a) and to River, its round trips and WAL bytes per call,
// and the final-state check of every storm and every fresh key.
//
// It lives in a module of its own, so River stays out of once's go.mod. The full run (a few
// minutes on two cores):
//
//	cd internal/throughput && go run . -keys 20000 -storm 1000 -rounds 5
//
// -db URL runs against an existing server instead of starting one (its durability settings
// are then the server's). The package's test runs every scenario with tiny counts and checks
// the final states, so `make test` keeps the benchmark working.
package main
