package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/oncekit/once/generator"
	once "github.com/oncekit/once/runtime"
)

// Exit codes (see the package doc).
const (
	exitOK    = 0
	exitStale = 1
	exitInput = 2
	exitEnv   = 3
)

// run is the command, minus the process: tests call it directly.
func run(args []string, stdout, stderr io.Writer) int {
	if len(args) > 0 {
		switch args[0] {
		case "inventory":
			return runInventory(args[1:], stdout, stderr)
		case "verify":
			return runVerify(args[1:], stdout, stderr)
		}
	}
	return runGenerate(args, stdout, stderr)
}

func newFlags(name string, stderr io.Writer) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	return fs
}

// inputError marks an error in what the user gave: exit 2.
type inputError struct{ error }

func load(dir string, tags string, patterns []string) (*generator.Result, error) {
	cfg := generator.LoadConfig{Dir: dir, Patterns: patterns}
	if tags != "" {
		cfg.BuildFlags = []string{"-tags=" + tags}
	}
	pkgs, err := generator.Load(cfg)
	if err != nil {
		return nil, inputError{err}
	}
	res, err := generator.Generate(pkgs)
	if err != nil {
		var errs generator.Errors
		if errors.As(err, &errs) {
			return nil, inputError{err}
		}
		return nil, err
	}
	return res, nil
}

func report(stderr io.Writer, err error) int {
	fmt.Fprintf(stderr, "%s\n", relErr(err.Error()))
	var in inputError
	if errors.As(err, &in) {
		fmt.Fprintln(stderr, "oncegen: nothing was written")
		return exitInput
	}
	return exitEnv
}

// relErr shortens absolute paths under the working directory in messages.
func relErr(msg string) string {
	wd, err := os.Getwd()
	if err != nil {
		return msg
	}
	return strings.ReplaceAll(msg, wd+string(filepath.Separator), "")
}

func rel(path string) string {
	if wd, err := os.Getwd(); err == nil {
		if r, err := filepath.Rel(wd, path); err == nil && !strings.HasPrefix(r, "..") {
			return r
		}
	}
	return path
}

func runGenerate(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("oncegen", stderr)
	check := fs.Bool("check", false, "write nothing; print a diff and exit 1 when a generated file or migration is due")
	migrations := fs.String("migrations", "", "directory of migrations to bring up to date with the declarations")
	format := fs.String("format", "sql", "migration format: "+strings.Join(generator.Formats, ", "))
	allowRename := fs.Bool("allow-rename", false, "accept a guard that looks renamed (same kind and key), starting its history afresh, and record it in the snapshot")
	lockTimeout := fs.String("lock-timeout", generator.DefaultLockTimeout, "lock_timeout set by every transactional migration file: a lock waited for longer fails the file instead of queueing every query on its table behind it")
	statementTimeout := fs.String("statement-timeout", generator.DefaultStatementTimeout, "statement_timeout set by every transactional migration file")
	downDrops := fs.Bool("down-drops-once-tables", false, "make the down part of the runtime's first schema step drop once's tables and every row in them (by default a down keeps them: they hold what was promised, billed and owed)")
	tags := fs.String("tags", "", "build tags for loading packages")
	verbose := fs.Bool("v", false, "list the files written")
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: oncegen [flags] [packages]\n       oncegen inventory [-format md|json] [packages]\n       oncegen verify -db DSN [packages]\n\nflags:")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return exitInput
	}
	if !contains(generator.Formats, *format) {
		fmt.Fprintf(stderr, "oncegen: unknown -format %q (formats: %s)\n", *format, strings.Join(generator.Formats, ", "))
		return exitInput
	}
	res, err := load("", *tags, fs.Args())
	if err != nil {
		return report(stderr, err)
	}

	// Everything is computed before anything is written.
	var migFiles map[string][]byte
	if *migrations != "" {
		opts := generator.Options{LockTimeout: *lockTimeout, StatementTimeout: *statementTimeout, DownDropsOnceTables: *downDrops}
		if err := opts.Validate(); err != nil {
			return report(stderr, inputError{err})
		}
		objs, err := generator.ObjectsWith(res.Guards, opts)
		if err != nil {
			return report(stderr, inputError{err})
		}
		snap, err := generator.ReadSnapshot(*migrations)
		if err != nil {
			return report(stderr, inputError{err})
		}
		plan, err := generator.Diff(snap, res.Guards, objs, *allowRename)
		if err != nil {
			return report(stderr, inputError{err})
		}
		if migFiles, err = generator.MigrationFiles(*migrations, *format, plan, opts); err != nil {
			return report(stderr, err)
		}
	}

	if *check {
		stale, err := res.Stale()
		if err != nil {
			return report(stderr, err)
		}
		for _, s := range stale {
			a, b := "a/"+rel(s.Path), "b/"+rel(s.Path)
			if s.Old == nil {
				a = "/dev/null"
			}
			if s.New == nil {
				b = "/dev/null"
			}
			fmt.Fprint(stdout, generator.UnifiedDiff(a, b, s.Old, s.New))
		}
		names := sortedKeys(migFiles)
		for _, n := range names {
			path := filepath.Join(*migrations, n)
			old, _ := os.ReadFile(path)
			fmt.Fprint(stdout, generator.UnifiedDiff("a/"+rel(path), "b/"+rel(path), old, migFiles[n]))
		}
		if len(stale) > 0 || len(names) > 0 {
			fmt.Fprintf(stderr, "oncegen: %d generated file(s) and %d migration file(s) are due: run go generate (or oncegen)\n", len(stale), len(names))
			return exitStale
		}
		return exitOK
	}

	changed, err := generator.Write(res)
	if err != nil {
		return report(stderr, err)
	}
	if len(migFiles) > 0 {
		if err := generator.WriteMigrations(*migrations, migFiles); err != nil {
			return report(stderr, err)
		}
		for _, n := range sortedKeys(migFiles) {
			changed = append(changed, filepath.Join(*migrations, n))
		}
	}
	if *verbose {
		for _, p := range changed {
			fmt.Fprintln(stdout, rel(p))
		}
	}
	return exitOK
}

func runInventory(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("oncegen inventory", stderr)
	format := fs.String("format", "md", "output format: md (a Markdown table) or json")
	tags := fs.String("tags", "", "build tags for loading packages")
	if err := fs.Parse(args); err != nil {
		return exitInput
	}
	if *format != "md" && *format != "json" {
		fmt.Fprintf(stderr, "oncegen inventory: unknown -format %q (md or json)\n", *format)
		return exitInput
	}
	res, err := load("", *tags, fs.Args())
	if err != nil {
		return report(stderr, err)
	}
	wd, _ := os.Getwd()
	entries := generator.Inventory(res.Guards, wd)
	if *format == "json" {
		b, err := generator.InventoryJSON(entries)
		if err != nil {
			return report(stderr, err)
		}
		stdout.Write(b)
		return exitOK
	}
	stdout.Write(generator.InventoryMarkdown(entries))
	return exitOK
}

func runVerify(args []string, stdout, stderr io.Writer) int {
	fs := newFlags("oncegen verify", stderr)
	dsn := fs.String("db", os.Getenv("ONCE_DATABASE_URL"), "the database to check (default $ONCE_DATABASE_URL)")
	tags := fs.String("tags", "", "build tags for loading packages")
	if err := fs.Parse(args); err != nil {
		return exitInput
	}
	patterns := fs.Args()
	if len(patterns) > 0 && (strings.HasPrefix(patterns[0], "postgres://") || strings.HasPrefix(patterns[0], "postgresql://")) {
		// oncegen verify DSN [packages], as well as -db DSN.
		*dsn, patterns = patterns[0], patterns[1:]
	}
	if *dsn == "" {
		fmt.Fprintln(stderr, "oncegen verify: give the database with -db DSN")
		return exitInput
	}
	res, err := load("", *tags, patterns)
	if err != nil {
		return report(stderr, err)
	}
	objs, err := generator.Objects(res.Guards)
	if err != nil {
		return report(stderr, inputError{err})
	}
	ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
	defer cancel()
	conn, err := pgx.Connect(ctx, *dsn)
	if err != nil {
		fmt.Fprintf(stderr, "oncegen verify: connecting: %v\n", err)
		return exitEnv
	}
	defer conn.Close(context.Background())
	problems, err := generator.Verify(ctx, conn, objs)
	if err != nil {
		fmt.Fprintf(stderr, "oncegen verify: %v\n", err)
		return exitEnv
	}
	// The step is read as once.Verify and once.Migrate read it.
	step, err := once.AppliedSchemaStep(ctx, conn)
	if err != nil {
		fmt.Fprintf(stderr, "oncegen verify: %v\n", err)
		return exitEnv
	}
	fmt.Fprintf(stdout, "oncegen verify: once's tables are at schema step %d (this runtime's latest: %d)\n", step, once.LatestSchemaStep())
	for _, p := range problems {
		fmt.Fprintln(stdout, p)
	}
	if len(problems) > 0 {
		fmt.Fprintf(stderr, "oncegen verify: %d constraint(s) the code relies on are missing, INVALID or different\n", len(problems))
		return exitStale
	}
	fmt.Fprintf(stdout, "oncegen verify: all %d object(s) present and valid\n", len(generator.Requirements(objs)))
	return exitOK
}

func contains(list []string, s string) bool {
	for _, v := range list {
		if v == s {
			return true
		}
	}
	return false
}

func sortedKeys(m map[string][]byte) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
