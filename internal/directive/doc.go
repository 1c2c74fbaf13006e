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
// Each kind's arguments, and the table= forms that keep a promise on the user's own rows,
// are documented for users in docs/directives.md at the module root, which a test holds to
// this package's table. Every kind takes name= and key= (or, in a table= form, table= and
// columns=); a table= form's function inserts its row with the generated conflict clause
// and reports the insert's missing row as once.InsertConflict does.
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
//  5. docs/directives.md: its row in the kinds' table (and the table= forms' table, for a
//     kind with one); TestDocs_DirectivesPageMatchesTheTable fails until every argument is
//     named there.
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
// a forever's seal= (checked in the package's scope) a once.Sealer, and none may read the
// clock or a random source. Its errors are [Error]s too, worded and
// placed the same whichever tool prints them.
package directive
