// Package analyzer is oncelint as a library: the go/analysis checks that find effects run
// again with no promise (ONCE001), keys that cannot survive a retry (ONCE002),
// process-local sets standing in for a promise (ONCE003), calls that bypass a generated
// guard (ONCE004), check-then-insert races (ONCE005), promises of the wrong length
// (ONCE006) and malformed directives (ONCE000).
//
// Each check is a package named by its code; they share one analysis (internal/model)
// that knows effects by identity (package catalog, extended by the module root's
// oncelint.json), follows them through the code with SSA built in the pass for the
// packages that need it, and passes what each function does to the packages calling it
// as facts. [Analyzers] is the set with the built-in catalogue; [New] builds a set with a
// configuration, for golangci-lint's module plugin and for tests:
//
//	checks := analyzer.New(&analyzer.Config{Catalogs: []string{"more.json"}})
//
// What the analysis cannot know, the user declares, each in one line of a function's doc
// comment:
//
//   - //once:KIND key=... — the promise (a //once: KIND with table= on a hand-written
//     claim declares the claim: code after a call of it runs under it);
//   - //oncelint:read reason — the function's requests only read: no effect;
//   - //oncelint:repeat reason — doing it again is its job (a resend): its effects are
//     not findings;
//   - //oncelint:ignore ONCE00N reason — silences one finding where it points (on the
//     statement or in the doc comment of the function; at a place the finding names as
//     related too). The reason is required; an ignore that silences nothing is reported.
//
// Findings carry their code as the diagnostic's category and at the end of the message.
// See the docs directory of the module for the model, the catalogue's format, the
// coverage summary and baselines.
package analyzer
