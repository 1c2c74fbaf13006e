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
//     table.
//
// SQL is read from constant strings passed to the query methods of database/sql, pgx,
// sqlx and once.DB (Exec, Query, QueryRow, Get, Select, ...); SQL built at run time is not
// judged.
package once005
