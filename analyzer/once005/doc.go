// Package once005 defines an Analyzer that reports check-then-insert races.
//
// # Analyzer once005
//
// once005: report a read that decides an insert into the same table with nothing to serialize them
//
// A function that reads a table, finds a row absent and inserts it lets two concurrent
// calls both read "absent" and both insert. ONCE005 reports the insert, where it is
// decided, unless the insert has a conflict clause or handles its unique violation; a
// unique constraint covers the columns the read compares (schema files, DDL in Go
// constants, a //once: ... table= directive, ORM tags, ent schemas) or those the row
// fills from the table's state, or the row's primary key comes from the input (a double
// submit repeats it); a lock is taken first (an advisory lock, LOCK TABLE, SERIALIZABLE,
// a row of another table FOR UPDATE, a latch whose outcome is tested); or a promise
// holds (a //once: directive, a runtime guard, or every caller's promise or lock in the
// transaction it passes an unexported function).
//
// What decides is read over SSA: the read's results are followed to a branch testing
// whether a row exists (err == nil after QueryRow or First, errors.Is(err,
// sql.ErrNoRows), nil, rows.Next(), EXISTS, Exist, a count against zero or one) or
// another property of it, one way leading to the insert. An insert made only where the
// row was found follows from it. A count or an amount against a limit of two or more
// is a cap: two calls overrun it by one and duplicate nothing, so it is reported only
// where it decides an upsert adding to the total it read, with the statement promise's
// fix. A read of a row's state deciding an UPDATE to a new state is a claim, reported
// unless the row is locked or the update tests the old state and is checked; so is an
// UPDATE writing back an amount worked out in Go from one the read tested (a debit). A read
// deciding a DELETE of the row it found, with an insert, consumes the row (a one-time
// token redeemed): reported unless the row is locked or the delete is checked.
//
// Statements are known by identity, from catalog.json: the query methods of
// database/sql, sqlx, pgx, bun and once.DB, an interface one of them implements (sqlc's
// DBTX), the chains of gorm, xorm, bun and ent's generated clients, and of the query
// builders squirrel and sqlf. SQL text is read where constant, joined with + or made by
// fmt.Sprintf, through the package's functions returning it; a part not known is left out
// before a name (a tenant's table prefix) and is 0 elsewhere. DDL executed as such text
// counts as a schema. What a function sends reaches its callers as a fact. Unique constraints are read from the .sql and .go
// files of the module (vendor, testdata, nested modules and oncegen's files skipped)
// and from those -schema (Config.Schemas) names, which must exist.
package once005
