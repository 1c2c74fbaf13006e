// Package directive parses and validates //once: directives: the one model of a declared
// promise that oncegen and oncelint share, so both tools report the same text, at the same
// file:line:col, for the same mistake.
//
// # Grammar
//
// A directive is a line of a function's (or method's) doc comment, written in Go's directive
// form (no space after //, like //go:generate), so godoc hides it:
//
//	// SendReply emails the creator's answer.
//	//
//	//once:provider key=reply.ID prefix=answer
//	func SendReply(ctx context.Context, mail Mailer, reply Reply) error
//
// The word after "//once:" is the kind, the length of the promise; the arguments follow as
// arg=value words separated by spaces. Lists are comma-separated with no spaces
// (open=pending,running). A value that must hold a space is quoted as a whole argument,
// "key=a, b", the convention of [go/ast.Directive.ParseArgs].
//
// # Kinds and their arguments
//
// Every kind takes name= (the guard's stored name; by default <package>.<Func>, or
// <package>.<Type>.<Method> for a method) and key= (comma-separated Go expressions over the
// function's parameters and receiver; required unless table= is given).
//
//	request      key
//	transaction  key, wait=true|false (false: busy instead of waiting), timeout=DURATION (lock timeout)
//	statement    key, cap=N|EXPR (required), n=N|EXPR (default 1)
//	episode      key
//	open         key, stale=DURATION (default: the runtime's, 45s from the last heartbeat)
//	forever      key, retain=DURATION, stale=DURATION, scope=EXPR, fingerprint=EXPR,...,
//	             repeat=safe, wait=DURATION (how long a duplicate waits for the recorded result)
//	provider     key, prefix=TEXT (default: the guard name), ttl=DURATION (the provider's window)
//	lease        key, ttl=DURATION (required), wait=DURATION (how long to wait for the holder)
//
// # The table= forms
//
// With table=, the promise lives on the user's own rows and the function does the insert
// itself, with the generated conflict clause, and reports the insert's no-row as the
// runtime's ErrConflict (once.InsertConflict on the insert's scan, or once.Conflict naming
// the row that holds the promise), so that a SELECT finding nothing is not taken for a
// duplicate. columns= names the key columns in place of key=, and each kind names the rest:
//
//	statement  table=T columns=C,... counter=COL cap=N   counter column within 0..cap, unique index on the key
//	episode    table=T columns=C,... latch=COL           latch column, unique index on the key
//	open       table=T columns=C,... status=COL open=V,... partial unique index while open
//	forever    table=T columns=C,... [nulls=notdistinct]  unique index
//
// The conflict clause guards only a key that has a row already. The statement form's first
// insert of a key creates its row, so the clause cannot compare it with the cap (nor can the
// wrapper: the insert, not a directive argument, says how many units it takes); oncegen adds
// a CHECK constraint (counter <= cap, [Directive.CapName]) that does, and the generated
// wrapper reports its violation as a refusal, with nothing written. The episode form's insert
// must set the latch, which the latch column oncegen adds does by its DEFAULT
// clock_timestamp() (a latch column of the table's own, which oncegen leaves as it is, needs
// that default too, or the insert must write the latch itself).
//
// Table, column and status names must be plain lower-case SQL identifiers (letters, digits
// and _, not a reserved word, at most 63 bytes; a table may be schema-qualified), and open=
// values plain words: nothing can be injected into the emitted SQL through a directive.
// [Directive.ConflictClause], [Directive.IndexName] and [Directive.IndexPredicate] derive the
// SQL both tools compare, from one place.
//
// # The per-kind table
//
// Everything about a kind that varies by kind is its row in one table, [SpecOf] (spec.go):
// its arguments in either form, its promise, the runtime guard its wrapper calls, whether the
// wrapper takes a once.DB or supplies a pgx.Tx, the status of a call that does not run, the
// wrapper's doc and the inventory's mechanism, the extra function it generates, what its
// table= form emits in SQL, and what the analyzer takes from it. The parser, the generator
// (wrapper, inventory, migrations) and the analyzer read the row; none of them branches on a
// kind.
//
// Adding a kind touches five files:
//
//  1. internal/directive/spec.go: its constant and its row (an argument with a meaning no
//     kind has yet also gets its field on Directive).
//  2. runtime/<kind>.go: its guard, the type the row's Guard names, with a Do method (and
//     Rearm where the row's Rearm says so; a kind that replays a recorded value also has
//     the generic function <Guard>Value). TestSpec_EveryKindHasARowAndItsRuntimeGuard
//     fails until the row and the guard exist.
//  3. the runtime's schema: its tables, in a new schema step (runtime/onceschema/schema).
//  4. testdata/generate/kinds/kinds.go: a function with its directive; go test ./generator
//     -update writes the golden wrapper beside it.
//  5. its row in the kinds' table of the directive grammar (today "Kinds and their
//     arguments" above).
//
// # Errors
//
// [ParseFile] returns every mistake it finds as an [Error] printing file:line:col: message:
// an unknown kind (with the nearest valid one), an unknown or repeated argument, a missing
// required argument, a bad duration or number, two directives on one function, a directive
// not on a function, an identifier that is not a plain SQL identifier.
//
// # Types
//
// [CheckTypes] then resolves a parsed directive against its package's types, for both tools
// alike: the guarded function's signature (a context.Context first; error or (T, error)
// results; one pgx.Tx where the guard supplies it) and each expression, type-checked in the
// function's scope. A key= or scope= part must have a type once.Key encodes, a
// fingerprint= part one encoding/json encodes (no channels, functions, complex numbers, or
// map keys that are not strings, integers or text marshalers), cap= and n= must be integers,
// and none may read the clock or a random source. Its errors are [Error]s too, worded and
// placed the same whichever tool prints them.
package directive
