// Package once005 defines an Analyzer that reports check-then-insert races.
//
// # Analyzer once005
//
// once005: report a read that decides an insert into the same table with nothing to serialize them
//
// A function that reads a table, decides from what it found that the row it wants is
// absent, and then inserts it, lets two concurrent calls both read "absent" and both
// insert. ONCE005 reports the insert, at the function that decides, with the read as
// related information, when nothing makes the insert its own check or serialises the
// two:
//
//   - a conflict clause on the insert (ON CONFLICT, INSERT IGNORE, gorm's
//     clause.OnConflict, bun's On("CONFLICT ...") or Ignore(), ent's OnConflict);
//   - a unique constraint (or primary key) on the columns the read compares, declared
//     in the project's schema files (see below), in DDL held in the string constants of
//     the package or a package it imports (executed at start-up), by a //once: ...
//     table= directive, in the model's struct tags (gorm's uniqueIndex and unique, bun's
//     unique and pk, xorm's unique and pk) or in an ent schema: the second insert fails;
//   - code that handles the unique violation (SQLSTATE 23505 or unique_violation,
//     MySQL's "Duplicate entry", SQLite's "UNIQUE constraint failed", gorm's
//     ErrDuplicatedKey, ent's IsConstraintError), in the function or the one that
//     sends the insert: a unique index stands behind it;
//   - a lock taken before the insert: an advisory lock, LOCK TABLE, a serializable
//     transaction (in SQL, sql.LevelSerializable, pgx.Serializable), a row of another
//     table read FOR UPDATE, FOR NO KEY UPDATE or FOR SHARE (gorm's clause.Locking,
//     xorm's and ent's ForUpdate, bun's For("UPDATE")), or a hand-written latch (a
//     try-lock, an UPDATE from an old state, an INSERT .. DO NOTHING or a DELETE whose
//     outcome a branch tests). A row lock on the table being checked does not count:
//     it locks the rows that exist, and the race is about the one that does not;
//   - a promise: a //once: directive on the function (a transaction promise is the lock
//     for decisions made from a read), a runtime guard running it, or, for an
//     unexported function the package only calls, every caller holding a promise or a
//     lock, taken through the transaction handle it passes, up to a few callers up.
//
// What decides is read from the SSA form of the function, by meaning: the read's
// results are followed through variables, fields and the calls that scan into them, to
// a branch that tests whether a row exists (err == nil after QueryRow's Scan or gorm's
// First, errors.Is(err, sql.ErrNoRows), a row compared with nil, rows.Next(), a bool
// from SELECT EXISTS or an ORM's Exist, a count compared with zero or one) or another
// test of what was found (a state, a flag), where one way leads to the insert and the
// other can end without it. A bare err != nil after a read that does not report a
// missing row decides nothing. An insert made only where the read found its row (a
// token issued after its refresh token was read) follows from that row: not reported.
//
// A count or an amount compared with a limit of two rows or more (count(*) < max,
// sum(amount) + n > quota) is a cap, not an existence test. Two calls at once exceed a
// cap by one; they duplicate nothing, and a cap before a plain insert is not reported.
// A cap does decide an upsert that adds to the total it read (INSERT .. ON CONFLICT ..
// DO UPDATE SET used = used + 1 with no WHERE): that is a counter both calls find room
// in, reported with the statement promise's fix (DO UPDATE .. WHERE the new total is
// within the limit, //once:statement).
//
// A read of a row's state deciding an UPDATE that sets a state (SET state = 'sent') is a
// claim. It is reported when two workers can both win it: the read takes no row lock,
// and the update does not both test the old state in its WHERE (AND state = 'pending')
// and have its rows affected (or its RETURNING row) checked.
//
// Statements are known by the identity of what sends them: the query methods of
// database/sql, sqlx, pgx (v4 and v5, pgxpool), bun and once.DB given constant SQL, an
// application's interface one of those types implements (sqlc's DBTX), and the builder
// chains of gorm, xorm, bun and ent clients, read for the model or table, the columns
// compared, row locks and conflict clauses. A model's table is its TableName method's
// (read from its package), bun's table: tag, or the ORM's default name (snake case,
// plural but for xorm). What a function sends travels to its callers as a fact: a
// look-up in one package deciding an insert made by another is judged where it is
// decided, and a function that both reads and writes a table is judged in itself.
//
// # Schema files
//
// Unique constraints are read from the schema nearest the package, from its directory
// up to the module root (the nearest go.mod): the first directory whose own .sql and .go
// files, or the directories below it named migrations, migration, migrate, db, schema
// or sql, define a table or a constraint; failing that, every .sql and .go file of the
// module. Go files are read for the DDL in their string literals and for ent schema
// types. So two apps in one module each see their own migrations. vendor, testdata,
// hidden directories, nested modules and the migrations oncegen writes (their
// constraints belong to the //once: declarations, which count where they are declared)
// are skipped. The -schema flag (or Config.Schemas) names more files or directories,
// relative to the module root; a name that does not exist is an error.
package once005
