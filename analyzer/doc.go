// Package analyzer is oncelint as a library: the go/analysis analyzers that find effects
// without a promise (ONCE001), keys that cannot survive a retry (ONCE002), process-local
// sets standing in for a promise (ONCE003), calls that bypass a generated guard
// (ONCE004), check-then-insert races (ONCE005), promises of the wrong length (ONCE006)
// and malformed directives (ONCE000).
//
// Each check is its own analyzer, in a package named by its code (once001, ...), as the
// x/tools passes are; they share one analysis of the package (which calls are effects,
// which functions hold promises) and its facts, so a package is walked once however many
// checks run. [Analyzers] is the set with the built-in provider catalogue; [New] builds a
// set with a configured one, for golangci-lint's module plugin and for tests:
//
//	analyzers := analyzer.New(analyzer.Config{Catalogs: []string{"oncelint.json"}})
//
// There is no NewAnalyzer returning a single configured analyzer, and no single Analyzer
// variable: a check alone is not a configuration. The checks require one shared effects
// analyzer, which holds the catalogue and exports the facts they all read, so a
// configuration is the set of checks built around one such analyzer; an analyzer built
// on its own would read a different catalogue, or run the shared analysis twice. Each
// check package still exports its Analyzer (with the built-in catalogue) for drivers
// that want one check.
//
// Findings carry their code as the diagnostic's category and at the end of the message.
// //oncelint:ignore ONCE00N reason, in a function's doc comment or above a statement,
// silences one code there; the reason is required, and an ignore that silences nothing is
// reported.
package analyzer
