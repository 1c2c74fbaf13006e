// Command oncelint finds side effects without a promise, idempotency keys that cannot
// survive a retry, process-local sets standing in for a promise, calls that bypass a
// generated guard, check-then-insert races and promises of the wrong length.
//
// Run it on its own:
//
//	oncelint ./...
//	oncelint -json ./...
//	oncelint -sarif ./... > oncelint.sarif
//	oncelint -catalog=oncelint.json ./...
//
// or as go vet's tool, which caches results per package and shares facts through vet's
// own files:
//
//	go vet -vettool=$(which oncelint) ./...
//	go vet -vettool=$(which oncelint) -json ./...
//
// Under go vet the findings do not depend on what an earlier command vetted on the same
// build cache: the tool's ID, which go vet puts in every cache key, names the go command
// that asked (see printVetID).
//
// -lowmem checks each package in a process of its own, through go vet with this tool, so
// memory is that of the largest package rather than of every package loaded from source at
// once; the findings are printed as the standalone driver prints them.
//
// -sarif writes a SARIF 2.1.0 log for code-scanning dashboards (see package
// github.com/oncekit/once/internal/sarif). Each check can be turned off by its name (-once003=false) or run alone (-once001).
// -catalog names extra provider catalogue files (see package
// github.com/oncekit/once/analyzer/catalog); a relative name resolves from the module
// root. -schema names files or directories holding unique constraints that ONCE005
// reads besides the migrations and schema files it finds under the module root. Exit status: 0 clean, 1 on errors (such as a package that does not compile), 3
// (standalone) or 1 (go vet) when findings are reported; with -json the standalone
// driver exits 0 and the findings are in the output.
package main

import (
	"flag"
	"fmt"
	"os"

	"golang.org/x/tools/go/analysis/multichecker"

	"github.com/oncekit/once/analyzer"
)

func main() {
	if len(os.Args) == 2 && os.Args[1] == "-V=full" {
		if err := printVetID(os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		return
	}
	if hasFlag(os.Args[1:], "lowmem") {
		os.Exit(runLowMem(os.Args[1:], os.Stdout, os.Stderr))
	}
	if hasFlag(os.Args[1:], "sarif") {
		os.Exit(runSARIF(os.Args[1:], os.Stdout, os.Stderr))
	}
	checks := analyzer.Analyzers
	if v := analyzer.CatalogFlag(checks); v != nil {
		flag.Var(v, "catalog", "extra provider catalogue `files` (comma-separated or repeated), resolved from the module root")
	}
	if v := analyzer.SchemaFlag(checks); v != nil {
		flag.Var(v, "schema", "schema `files` or directories with unique constraints (comma-separated or repeated), besides those found under the module root")
	}
	multichecker.Main(checks...)
}
