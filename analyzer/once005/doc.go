// Package once005 defines an Analyzer that reports check-then-insert races.
//
// # Analyzer once005
//
// once005: report a read that decides an insert into the same table with nothing to serialize them
//
// A function that reads a table (SELECT ... FROM runs WHERE org_id = $1), decides from
// what it found, and then inserts into the same table, lets two concurrent calls both
// read "absent" and both insert. ONCE005 reports the insert when nothing serialises the
// two statements:
//
//   - no ON CONFLICT clause on the insert (the insert as its own check, against a unique
//     index);
//   - no lock taken first: pg_advisory_xact_lock, LOCK TABLE, a SERIALIZABLE transaction
//     (in SQL or through sql.TxOptions / pgx.TxOptions), or SELECT ... FOR UPDATE of
//     another table's row (a parent row). FOR UPDATE on the table being checked does not
//     count: it locks the rows that exist, and the race is about the row that does not;
//   - no declared constraint: the function holds no //once: promise (a transaction promise
//     is exactly the lock for decisions made from a read), is not called only under one,
//     and no //once: ... table=T declaration in the package puts a unique index on the
//     table;
//   - no unique violation handled: the function, a function of the package it calls, or
//     the helper that sends the insert, names SQLSTATE 23505 (a literal, or
//     pgerrcode.UniqueViolation) or unique_violation. Code that handles it has a unique
//     index behind its insert, and the race ends in an error one caller handles (the
//     find-or-create idiom: read the winner's row back), not in a duplicate.
//
// The read decides the insert when an if or a switch between them tests what the read
// returned: the row found or not (err == nil, errors.Is(err, pgx.ErrNoRows), rows.Next()),
// a count, a flag, followed through the variables the read assigns or scans into. The
// bare error check (if err != nil { return err }) decides nothing: a read that only
// supplies values for the insert (the account of the action being copied) is not a check.
// Nor is a read that looks for other rows than the insert makes: when the read's WHERE
// compares only columns the insert does not set (the parent's id, before inserting a
// child with parent_id), it is not looking for the new row. Where the SQL names no
// columns on either side, the read is taken to be looking.
//
// The read and the insert may each be made by a helper: a look-up that reads the table
// and returns what it found (findByKey(ctx, db, key) (Action, bool, error)), an insert
// made by another (create(ctx, db, a)), in the package or in another one (the store
// package's FindAction and CreateAction, whose SQL travels as a fact). A helper that takes
// a lock (an advisory lock, a parent row FOR UPDATE) serialises what follows it as the
// lock itself would, and a helper that both reads and inserts into a table is judged in
// itself, not again where it is called.
//
// The same race hides behind an upsert that adds to the row with no condition: read the
// month's spend, decide there is room, then INSERT .. ON CONFLICT .. DO UPDATE SET used =
// spend.used + excluded.used. The conflict clause makes the insert safe but not the
// decision: two calls both read room for one more, and both add. ONCE005 reports such an
// upsert when a read of its table decides it, and says to let the statement decide (DO
// UPDATE .. WHERE used + n <= cap, which //once:statement generates). An upsert with that
// WHERE, or one that sets columns from the new values rather than adding to the old
// (SET plan = excluded.plan), is not reported.
//
// SQL is read from constant strings passed to the query methods of database/sql, pgx,
// sqlx and once.DB (Exec, Query, QueryRow, Get, Select, ...); SQL built at run time is not
// judged.
package once005
