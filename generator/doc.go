// Package generator is oncegen's engine: it loads Go packages, validates their //once:
// directives (with internal/directive) and the key expressions in them (with go/types), and
// produces, as bytes, the guard wrappers (once_gen.go per package), the SQL that table= forms
// rely on, migrations for review, and the inventory of every declared promise.
//
// Generation is pure: Generate returns the files it would write and the generated files no
// directive produces any more; Write writes them, and only when their bytes differ. Any
// error, in any package, means nothing is written: generation is all or nothing.
//
// # Loading
//
// Load lists the named packages with the go command, without resolving their imports,
// parses their files (a generated file as the empty file of its package), asks the go
// command for the export data of their imports alone, and type-checks the named packages
// here, each once. packages.Load with types would also have the go command compile the
// named packages, for export data nobody reads: a package about to be generated again has
// usually just been edited, so that compile is not in the build cache, and it was most of
// oncegen's time (BENCHMARKS.md). A package using cgo, whose files only the go command can
// prepare, is loaded with packages.Load. A build cache that is cold costs what a build
// costs: the imports are compiled once, for oncegen and the build after it.
//
// # Key expressions
//
// Each key= expression is type-checked in the scope of the function it guards (its
// parameters and receiver, and the package's own names), by directive.CheckTypes, the check
// oncelint's ONCE000 makes too. Its type must be one once.Key encodes: a string,
// integer or bool, a [16]byte UUID, a time.Time, a once.KeyPart or an
// encoding.TextMarshaler, a named type of one of those, or a pointer to one. A call of
// time.Now, time.Since or time.Until, of math/rand, math/rand/v2 or crypto/rand, or of a
// constructor in a UUID/ULID package is refused: a retry must produce the same key. A
// fingerprint= expression must have a type encoding/json encodes, or the runtime would
// refuse every call. A forever guard's seal= expression is type-checked in the package's
// scope, not the function's (the sealer is the package's, evaluated at each call), and must
// have Seal and Open methods as once.Sealer has.
//
// # Wrappers
//
// For func F(ctx context.Context, args...) error (or (T, error)), the wrapper is
//
//	func FOnce(ctx context.Context, db once.DB, args...) (once.Outcome, error)
//
// returning (T, once.Outcome, error) for (T, error). Its key is once.MustKey(parts...) when no
// part can fail to encode (a string, integer or bool that is no text marshaler, a [16]byte,
// a time.Time, a once.KeyPart value), and otherwise comes from once.Key, whose error
// the wrapper returns naming the guard (a nil pointer, a MarshalText error). Request and
// provider guards take no db; transaction and table= guards supply F's pgx.Tx parameter
// themselves, so it is left out of the wrapper's parameters. What varies by kind (the guard,
// its fields, the doc, whether it takes a db or supplies a pgx.Tx, the extra Rearm function)
// is read from the kind's row, directive.SpecOf. A method gets a method wrapper.
// Each wrapped function also gets a compile-time guard (var _ func(...) ... = F) that breaks
// the build when F's signature changes without regenerating.
//
// # Requirements
//
// A package with table= guards also gets an init function that registers, with
// onceschema.Require, the objects of the database they rely on (their unique indexes, latch and
// counter columns, counter checks: Requirements of Objects), for once.Verify to check when
// the program starts. A registration, not an exported value the program would pass to
// Verify: the value would be API in the user's package that they did not write, and a
// program that forgot to pass one package's would check less without a word, while a linked
// package cannot fail to register. oncegen verify checks the same requirements with the same
// function, once.VerifyRequirements.
//
// # Formatting
//
// The file is rendered by jennifer unformatted, its imports grouped as goimports groups
// them (standard library first), and formatted once with go/format; the doc comments are
// written outside go/format, already in the form it leaves as it is, and put back above
// their declarations. Nothing is cached between runs. Formatting is most of oncegen's work
// after loading, so the generated code is kept short: a key that cannot fail to encode needs no error
// branch, and each wrapped call's closure stays on one line.
package generator
