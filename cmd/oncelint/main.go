// Command oncelint finds side effects that run again with no promise, idempotency keys
// that cannot survive a retry, process-local sets standing in for a promise, calls that
// bypass a generated guard, check-then-insert races and promises of the wrong length.
//
// Run it on its own, the form for CI:
//
//	oncelint ./...
//	oncelint -json ./...
//	oncelint -sarif ./... > oncelint.sarif
//	oncelint -baseline=oncelint.baseline ./...
//
// or as go vet's tool:
//
//	go vet -vettool=$(which oncelint) ./...
//
// On its own, oncelint runs go vet with itself as the tool, so each package is checked in
// a process of its own that reads its dependencies' types and facts from files (its
// memory is that of the largest package), and the go command's build flags apply: -tags,
// -mod, -modfile and -overlay are passed on, and GOFLAGS is read as go vet reads it. It
// then prints each finding once, sorted (a finding reached from two packages is one),
// and ends with the run's coverage: how many packages were analysed, how many effects
// were seen by class, how many are under a promise (by kind), with a key, or declared,
// how many findings there are, and the sends through a transport that no catalogue entry
// classifies, grouped by the function a catalogue line would name, with that line. The
// summary goes to standard error, into the -json output and into the SARIF run's
// properties. Under go vet itself there is no end of the run to print it at: go vet
// prints the findings alone.
//
// -baseline FILE reports only the findings not recorded in FILE; with -write-baseline it
// records the run's findings there instead (and exits 0). A finding is recorded by a
// fingerprint of its code, its package, the function holding it and its message, never
// its line, so findings keep their fingerprint when code above them moves; SARIF results
// carry it as partialFingerprints.
//
// -strict reports every catalogued effect no promise covers, on a repeat path or not.
// -catalog names catalogue files beyond the built-in one and the module root's
// oncelint.json (see package github.com/oncekit/once/analyzer/catalog); -schema names
// files or directories holding unique constraints for ONCE005. -test=false leaves test
// files' findings out. Each check can be turned off by its name (-once003=false) or run
// alone (-once001).
//
// Under go vet the findings do not depend on what an earlier command vetted on the same
// build cache: the tool's ID, which go vet puts in every cache key, names the go command
// that asked and the module's oncelint.json (see printVetID).
//
// Exit status: 0 clean, 1 on errors (such as a package that does not compile), 3
// (standalone) or 1 (go vet) when findings are reported; with -json the standalone
// driver exits 0 and the findings are in the output.
package main

import (
	"flag"
	"fmt"
	"os"
	"strings"

	"golang.org/x/tools/go/analysis/unitchecker"

	"github.com/oncekit/once/analyzer"
)

func main() {
	args := os.Args[1:]
	if len(args) == 1 && args[0] == "-V=full" {
		if err := printVetID(os.Stdout); err != nil {
			fmt.Fprintln(os.Stderr, err)
			os.Exit(1)
		}
		return
	}
	if vetInvoked(args) {
		cfg := &analyzer.Config{}
		checks := analyzer.NewCommand(cfg)
		cfg.RegisterFlags(flag.CommandLine, checks)
		unitchecker.Main(checks...)
		return
	}
	os.Exit(standalone(args, os.Stdout, os.Stderr))
}

// vetInvoked reports whether go vet runs the tool: to ask its flags, or on the
// configuration file of one package.
func vetInvoked(args []string) bool {
	for _, a := range args {
		if a == "-flags" || a == "--flags" {
			return true
		}
	}
	return len(args) > 0 && strings.HasSuffix(args[len(args)-1], ".cfg")
}
