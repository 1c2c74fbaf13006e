package once

// Every expiry in this package (a lease's expires_at, an open claim's stale window) is
// computed by PostgreSQL with clock_timestamp(), never with the Go clock: processes on
// different machines disagree about the time, but they all ask the same database.
// clock_timestamp() rather than now(): now() is frozen at the start of the transaction, so a
// guard called inside a long transaction would see an old time and keep expired leases alive.
//
// A statement that writes one instant into several columns (an outcome's settled_at, and its
// expires_at Retain later) reads statement_timestamp() instead: the time the statement
// reached the server, one reading for the whole statement, and likewise never frozen by the
// transaction. The other way to read clock_timestamp() once, a join with
// (SELECT clock_timestamp() AS now), costs the statement a join on every execution.
//
// Durations travel as whole microseconds (PostgreSQL's interval resolution, see
// dbcall.Micros) and are turned into intervals in SQL, so no interval text is parsed and no
// precision is lost.
