// Package onceschema is the schema of once's runtime and the proof that a database holds it:
// the tables the guards keep their promises in (once.*), applied as numbered steps; the
// objects the guards of an application rely on (the unique indexes, latch and counter
// columns of its table= forms), registered by the code oncegen generates; and Verify, which
// finds every one of them in the live database at start-up.
//
// # Applying the schema
//
// The runtime's schema is one step today, and grows by steps. A program applies the steps
// its database lacks with Migrate, each in a transaction that records it in
// once.schema_steps; or it applies the migration files oncegen writes (goose,
// golang-migrate, Atlas, plain SQL), which record the same rows. Either may follow the
// other: every statement of a step may run again on a database that holds it.
//
// # The rule for changing it
//
// From the v0.1 release on, a released step is never edited: databases have applied it, and
// oncegen has written it into applications' migration folders. A correction, a new column, a
// new index is a new step, NNNN_name.up.sql with the next number, with its down
// (NNNN_name.down.sql, which keeps every row a user could not get back) and, when it
// creates tables that hold data, the down that drops them (NNNN_name.drop.sql, emitted only
// when a user asks for it by name). A step is online DDL (squawk finds nothing in it: a new
// column nullable or with a constant default, a CHECK added NOT VALID); it runs in one
// transaction, so an index on a table that holds rows, a backfill or a VALIDATE goes in a
// step of its own. An index or trigger a step creates is added to runtimeIndexes or
// runtimeTriggers, so that Verify requires it. LatestStep then grows by one, Verify
// requires it, Migrate applies it, and the next oncegen run writes one new migration
// holding only that step.
//
// # Proving the database at start-up
//
// A promise on a table= guard is only as real as the index behind it. Generated code
// registers what its guards rely on (Require, from the generated file's init); a program
// calls Verify (or once.Verify, the same function) once at start-up, after its migrations,
// and refuses to serve when an index or check is missing, was left INVALID by a failed
// concurrent build, or exists in another form. oncegen verify runs the same check from the
// command line.
package onceschema
