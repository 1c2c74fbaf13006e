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
//     (in SQL or through sql.TxOptions / pgx.TxOptions), or a row of another table (a
//     parent row) read under a row lock: SELECT ... FOR UPDATE or FOR SHARE, or an ORM's
//     lock (gorm's Clauses(clause.Locking{Strength: "UPDATE"}) or Set("gorm:query_option",
//     "FOR UPDATE"), xorm's and ent's ForUpdate(), bun's For("UPDATE")). A row lock on the
//     table being checked does not count: it locks the rows that exist, and the race is
//     about the row that does not (under READ COMMITTED the second caller, let through
//     after the first commits, re-reads only the rows it locked);
//   - no lock taken by every caller: an unexported function the package only calls
//     (never uses as a value), each of whose callers took such a lock before the call,
//     through the transaction handle it passes (a *sql.Tx, pgx.Tx, *xorm.Session,
//     *gorm.DB, bun.Tx, an ent *Tx: a local variable or parameter, not the package's
//     pool), runs its check and its insert under that lock;
//   - no hand-written latch taken first: a check and insert after a branch on a cron's
//     task-lock row, a pg_try_advisory_lock or a claim by an UPDATE a repeat refuses
//     (the effects package says which), in the function or in every caller of an
//     unexported one, have no second run checking the same row at the same time. Every
//     caller may hold it a few levels up, through callers that are themselves unexported
//     functions the package only calls (a cron takes its task lock, hands each batch to
//     a helper, whose workers check and insert for each user): a latch, unlike a
//     transaction's lock, covers whatever runs after it, whatever handle it is given;
//   - no unique constraint on the columns the read looks up, in the project's schema
//     (see Schema files below) or in the model's struct tags (gorm's uniqueIndex or
//     unique, bun's unique, xorm's unique): the second insert then fails, it does not
//     duplicate. A constraint counts when all its columns are among those the read
//     compares (WHERE org_id = $1 AND email = $2 is covered by UNIQUE (email)); when the
//     read's columns are not known, any unique constraint but a primary key counts;
//   - no natural primary key: the inserted model's primary key, declared by its tags
//     (xorm's pk, gorm's primaryKey, bun's pk), is not made by the database (no
//     autoincrement, serial, identity or default), and each of its fields reaches the
//     insert with a value from the function's input — a parameter, a request decoded
//     into the row, a constructor given the key, a literal or assignment from those —
//     never a new one: no UUID, ULID or snowflake id, random value or time, directly or
//     through a function of any package that returns or sets one (followed as a fact),
//     on any path. A retry, a double submit or a second request for the same thing then
//     makes the same key, and the second insert fails on it, whatever columns the read
//     looked at (a check for a duplicate client id before inserting the application
//     under its (owner, name)). An integer key counts only where the function sets it
//     (the ORMs number a zero one); a model whose BeforeInsert, BeforeCreate, BeforeSave
//     or BeforeAppendModel hook sets a key field to a new value, a key set by calling a
//     function value, and a row the function does not show the making of, do not count.
//     The ID field that no tag names is taken to be numbered by the database;
//   - no unique key made from the table's own state: when, before the insert, the
//     function sets a unique column of the inserted model (by tag or schema) to a value
//     computed by a read of the same table ("github_" + (last id + 1)), racing calls
//     read the same state and make the same key, and the second insert fails;
//   - no id of a row the call just made: the insert carries the id of a row the
//     function inserted before it (x.ID of a row an ORM inserted and numbered, written
//     back to it, or to the pointers of the slice it was ranged from; an id from
//     INSERT .. RETURNING id, or from a helper that inserts and returns it) in a column
//     the read compares (a field of the inserted literal, or the column a $n stands
//     under in VALUES), or anywhere in the row where the read names no columns. The
//     database numbered that row for this call, so no other call makes a row with its
//     id (a task inserted, then its favourite). An id in a column the read does not
//     compare (a new board's id in a pin looked up by user alone) leaves the race on
//     the columns it does;
//   - no declared constraint: the function holds no //once: promise (a transaction promise
//     is exactly the lock for decisions made from a read), is not called only under one,
//     and no //once: ... table=T declaration in the package puts a unique index on the
//     table;
//   - no unique violation handled: the function, a function of the package it calls, or
//     the helper that sends the insert, names SQLSTATE 23505 (a literal, or
//     pgerrcode.UniqueViolation) or unique_violation, MySQL's "Duplicate entry" or
//     SQLite's "UNIQUE constraint failed" (matched in the error's text), gorm's
//     ErrDuplicatedKey or ent's IsConstraintError. Code that handles it has a unique index behind its insert, and
//     the race ends in an error one caller handles (the find-or-create idiom: read the
//     winner's row back), not in a duplicate.
//
// The read decides the insert when an if or a switch between them tests what the read
// returned: the row found or not (err == nil, errors.Is(err, pgx.ErrNoRows), rows.Next()),
// a count, a flag, followed through the variables the read assigns or scans into. A
// value stored into a field (m.Seq = last.Seq + 1, numbering a new row after the last)
// is followed as that field, not as the whole variable: a later test of another field
// (if m.Name == "") does not test what the read found. The test must control the insert: hold it, return, leave by continue or break a loop
// that holds it, or stand in a block that holds it; a test in a loop that is over before
// the insert runs decides nothing about it. The bare error check (if err != nil { return err }) decides nothing: a read that only
// supplies values for the insert (the account of the action being copied) is not a check.
// Nor is a cap: a count the read returned (a COUNT scanned into n, len of the rows
// found; not a value of a row, such as a number m.Seq taken from the last one) compared with a limit that lets two rows or more through (n >= maxPending
// where maxPending is 10, len(codes) > limit for a limit the code is given) bounds how
// many rows there may be, it does not ask whether the one the insert makes exists; two
// calls at once exceed the cap by one, they duplicate nothing the check looked for. A
// limit of one row (n > 0, n >= 1, or a constant limit of 1 whatever its name) is the
// only-once check itself, and a read after the cap that asks whether the row exists
// still decides. A cap does decide an upsert that adds to the total it compared (see
// below).
// Nor is a read whose own rows are inserted again, only when it found some (if up !=
// nil { up.ID = 0; insert(up) }): that copies a row, it does not create an absent one.
// More generally, the insert must be on the path where the read found nothing: one
// made only where it found its row (inside if t != nil, in the else of if n == 0, or
// after if err != nil || t == nil { return ... }) follows from that row, as a new token
// follows from the refresh token the read validated; it does not create a row the read
// found absent, and a second call makes nothing a first one would not. The found path is
// told by a value the read returned compared with nil, len of it or a count compared with
// zero, through !, && and ||; a bool says nothing (its name, not its type, would say
// which way it points), so an insert after if !missing { return } is still decided.
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
// sqlx, gorm (Raw, Exec), bun (NewRaw) and once.DB (Exec, Query, QueryRow, Get, Select,
// NamedExec, ...); SQL built at run time is not judged.
//
// # ORMs
//
// Statements built with an ORM are read from the chain of builder calls that ends in the
// call sending them:
//
//   - gorm: First, Take, Last, Find, Count, Scan and Pluck read; Create inserts;
//     FirstOrCreate does both in one call, and is reported by itself when no lock and no
//     unique constraint stands behind it. Where("email = ?", e), Where(User{Email: e})
//     and inline conditions name the columns compared; clause.OnConflict (or an INSERT
//     IGNORE modifier) is the insert's conflict clause.
//   - xorm (and its forks under other paths, such as github.com/xorm-io/xorm): Get,
//     Exist, Find and Count read; Insert and InsertOne insert. A bean's set
//     fields are the read's conditions: a literal (Get(&User{Email: e})), or the literal
//     a local variable was made from (u := Seat{Owner: o, Name: n}; Get(&u) looks up
//     the primary key), and Find's condition beans.
//   - bun: NewSelect()...Scan, Exists or Count read; NewInsert()...Exec inserts, with
//     On("CONFLICT ...") or Ignore() as its conflict clause.
//   - ent (a generated client): Query()...Exist, Only, First, All, Count or IDs read;
//     Create()...Save or Exec inserts, OnConflict(...) making it an upsert. Predicates
//     such as user.EmailEQ(e) name the columns compared.
//   - sqlx: its query methods take SQL text, read as above.
//
// The table is the model's: Model(&User{}), the destination (&u, &users), Table("users"),
// named as the ORM does — a TableName() method (read from the model's package, through
// a fact), bun's `bun:"table:..."` tag, or the type's name in snake case (plural for gorm,
// bun and ent: APIKey is api_keys; singular for xorm). A builder kept in a variable
// between calls (tx := db.Clauses(...); tx.First(&u)) is read from the call that sends.
//
// # Schema files
//
// Unique constraints are read from the schema of the nearest directory, from the
// package's own up to the module root (the nearest go.mod), whose *.sql files or
// directories named migrations, migration, migrate, db, schema or sql define tables:
// CREATE UNIQUE INDEX (partial ones too), UNIQUE and PRIMARY KEY in CREATE TABLE,
// ALTER TABLE .. ADD UNIQUE, the same statements in the string literals of Go
// migrations, and ent schema types (field.String("email").Unique(),
// index.Fields("a", "b").Unique()). So two apps in one module, each with its own
// migrations, each see their own; where no directory defines one, every *.sql file of
// the module is read. vendor, testdata, hidden directories, nested modules and the
// migrations oncegen writes are skipped (those constraints belong to //once:
// declarations, which count only in the package that declares them). The -schema flag
// (oncelint -schema=deploy/constraints.sql, or analyzer.Config.Schemas) names more
// files or directories, relative to the module root; a name that does not exist is an
// error. Files are read once per run, in lexical order, and only where a finding
// depends on them.
package once005
