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
	"golang.org/x/tools/go/packages"

	"github.com/oncekit/once/generator"
	"github.com/oncekit/once/runtime/onceschema"
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
	res, _, err := loadPackages(dir, tags, patterns)
	return res, err
}

// loadPackages is load, with the packages it loaded.
func loadPackages(dir string, tags string, patterns []string) (*generator.Result, []*packages.Package, error) {
	cfg := generator.LoadConfig{Dir: dir, Patterns: patterns}
	if tags != "" {
		cfg.BuildFlags = []string{"-tags=" + tags}
	}
	pkgs, err := generator.Load(cfg)
	if err != nil {
		return nil, nil, inputError{err}
	}
	res, err := generator.Generate(pkgs)
	if err != nil {
		var errs generator.Errors
		var terrs generator.TypeErrors
		if errors.As(err, &errs) || errors.As(err, &terrs) {
			return nil, nil, inputError{err}
		}
		return nil, nil, err
	}
	return res, pkgs, nil
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

// rel shows an absolute path relative to the working directory (through .. when it is
// elsewhere, as a -migrations directory beside the module can be).
func rel(path string) string {
	if !filepath.IsAbs(path) {
		return path
	}
	if wd, err := os.Getwd(); err == nil {
		if r, err := filepath.Rel(wd, path); err == nil {
			return r
		}
	}
	return path
}

// genFlags are the flags of a generation run, and of the oncegen lines of //go:generate
// comments that -check reads.
type genFlags struct {
	check, allowRename, downDrops, verbose bool
	migrations, onceMigrations, format     string
	lockTimeout, statementTimeout, tags    string
}

func newGenFlags(name string, stderr io.Writer) (*flag.FlagSet, *genFlags) {
	fs := newFlags(name, stderr)
	f := &genFlags{}
	fs.BoolVar(&f.check, "check", false, "write nothing; print a diff and exit 1 when a generated file or migration is due. Without -migrations, also checks the migrations of every //go:generate line that runs oncegen with -migrations in the packages")
	fs.StringVar(&f.migrations, "migrations", "", "directory of migrations to bring up to date with the declarations")
	fs.StringVar(&f.onceMigrations, "once-migrations", "", "directory for the steps of once's own schema (its tables), numbered on their own, where sqlc or an ORM reading -migrations does not see them; apply it as a migration set of its own (default: -migrations)")
	fs.StringVar(&f.format, "format", "sql", "migration format: "+strings.Join(generator.Formats, ", "))
	fs.BoolVar(&f.allowRename, "allow-rename", false, "accept a guard that looks renamed (same kind and key), starting its history afresh, and record it in the snapshot")
	fs.StringVar(&f.lockTimeout, "lock-timeout", generator.DefaultLockTimeout, "lock_timeout set by every transactional migration file: a lock waited for longer fails the file instead of queueing every query on its table behind it")
	fs.StringVar(&f.statementTimeout, "statement-timeout", generator.DefaultStatementTimeout, "statement_timeout set by every transactional migration file")
	fs.BoolVar(&f.downDrops, "down-drops-once-tables", false, "make the down part of the runtime's first schema step drop once's tables and every row in them (by default a down keeps them: they hold what was promised, billed and owed)")
	fs.StringVar(&f.tags, "tags", "", "build tags for loading packages")
	fs.BoolVar(&f.verbose, "v", false, "list the files written")
	return fs, f
}

// dueMigrations returns the migration files that f's -migrations directory (dir, resolved)
// is due for the guards of res, and its -once-migrations directory (onceDir, resolved; ""
// when not given): none when they are up to date. Keys are paths relative to dir.
func dueMigrations(res *generator.Result, dir, onceDir string, f *genFlags) (map[string][]byte, error) {
	if !contains(generator.Formats, f.format) {
		return nil, inputError{fmt.Errorf("unknown -format %q (formats: %s)", f.format, strings.Join(generator.Formats, ", "))}
	}
	opts := generator.Options{LockTimeout: f.lockTimeout, StatementTimeout: f.statementTimeout, DownDropsOnceTables: f.downDrops, OnceDir: onceDir}
	if err := opts.Validate(); err != nil {
		return nil, inputError{err}
	}
	objs, err := generator.ObjectsWith(res.Guards, opts)
	if err != nil {
		return nil, inputError{err}
	}
	snap, err := generator.ReadSnapshot(dir)
	if err != nil {
		return nil, inputError{err}
	}
	plan, err := generator.Diff(snap, res.Guards, objs, f.allowRename)
	if err != nil {
		return nil, inputError{err}
	}
	return generator.MigrationFiles(dir, f.format, plan, opts)
}

func runGenerate(args []string, stdout, stderr io.Writer) int {
	fs, f := newGenFlags("oncegen", stderr)
	fs.Usage = func() {
		fmt.Fprintln(stderr, "usage: oncegen [flags] [packages]\n       oncegen inventory [-format md|json] [packages]\n       oncegen verify -db DSN [packages]\n\nflags:")
		fs.PrintDefaults()
	}
	if err := fs.Parse(args); err != nil {
		return exitInput
	}
	if !contains(generator.Formats, f.format) {
		fmt.Fprintf(stderr, "oncegen: unknown -format %q (formats: %s)\n", f.format, strings.Join(generator.Formats, ", "))
		return exitInput
	}
	if err := f.validDirs(); err != nil {
		fmt.Fprintf(stderr, "oncegen: %v\n", err)
		return exitInput
	}
	res, pkgs, err := loadPackages("", f.tags, fs.Args())
	if err != nil {
		return report(stderr, err)
	}

	// Everything is computed before anything is written.
	var migFiles map[string][]byte
	if f.migrations != "" {
		if migFiles, err = dueMigrations(res, f.migrations, f.onceMigrations, f); err != nil {
			return report(stderr, err)
		}
	}

	if f.check {
		due := map[string][]byte{}
		for n, b := range migFiles {
			due[filepath.Join(f.migrations, n)] = b
		}
		if f.migrations == "" {
			if err := generateLinesDue(pkgs, due); err != nil {
				return report(stderr, err)
			}
		}
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
		paths := sortedKeys(due)
		for _, path := range paths {
			old, _ := os.ReadFile(path)
			fmt.Fprint(stdout, generator.UnifiedDiff("a/"+rel(path), "b/"+rel(path), old, due[path]))
		}
		if len(stale) > 0 || len(paths) > 0 {
			fmt.Fprintf(stderr, "oncegen: %d generated file(s) and %d migration file(s) are due: run go generate (or oncegen)\n", len(stale), len(paths))
			return exitStale
		}
		return exitOK
	}

	changed, err := generator.Write(res)
	if err != nil {
		return report(stderr, err)
	}
	if len(migFiles) > 0 {
		if err := generator.WriteMigrations(f.migrations, migFiles); err != nil {
			return report(stderr, err)
		}
		for _, n := range sortedKeys(migFiles) {
			changed = append(changed, filepath.Join(f.migrations, n))
		}
	}
	if f.verbose {
		for _, p := range changed {
			fmt.Fprintln(stdout, rel(p))
		}
	}
	return exitOK
}

// validDirs refuses -once-migrations without -migrations, which keeps the snapshot and the
// table= files.
func (f *genFlags) validDirs() error {
	if f.onceMigrations != "" && f.migrations == "" {
		return fmt.Errorf("-once-migrations %s needs -migrations: the snapshot and the table= constraints' files are kept there", f.onceMigrations)
	}
	return nil
}

// generateLinesDue adds to due, by path, the migration files that each //go:generate line of
// pkgs running oncegen with -migrations would write: go generate runs the line in its
// package's directory (or the one go tool -C or go run -C names), where oncegen loads its own
// packages (./... by default), so the line is checked there, with its own flags. A line
// oncegen or go generate would refuse is an input error naming its position.
func generateLinesDue(pkgs []*packages.Package, due map[string][]byte) error {
	lines, err := generator.GenerateLines(pkgs)
	if err != nil {
		if errors.As(err, new(*generator.LineError)) {
			return inputError{err} // a line go generate would refuse
		}
		return err // a file that could not be read
	}
	checked := map[string]bool{}
	for _, l := range lines {
		lfs, lf := newGenFlags("oncegen", io.Discard)
		if len(l.Args) > 0 && (l.Args[0] == "inventory" || l.Args[0] == "verify") {
			continue
		}
		if err := lfs.Parse(l.Args); err != nil {
			return atLine(l, inputError{err})
		}
		if err := lf.validDirs(); err != nil {
			return atLine(l, inputError{err})
		}
		if lf.migrations == "" {
			continue
		}
		dir, onceDir := lf.migrations, lf.onceMigrations
		if !filepath.IsAbs(dir) {
			dir = filepath.Join(l.Dir, dir)
		}
		if onceDir != "" && !filepath.IsAbs(onceDir) {
			onceDir = filepath.Join(l.Dir, onceDir)
		}
		key := l.Dir + "\x00" + strings.Join(l.Args, "\x00")
		if checked[key] {
			continue
		}
		checked[key] = true
		res, err := load(l.Dir, lf.tags, lfs.Args())
		if err != nil {
			return atLine(l, err)
		}
		files, err := dueMigrations(res, dir, onceDir, lf)
		if err != nil {
			return atLine(l, err)
		}
		for n, b := range files {
			due[filepath.Join(dir, n)] = b
		}
	}
	return nil
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
	// The step is read as once.Verify and onceschema.Migrate read it.
	step, err := onceschema.AppliedStep(ctx, conn)
	if err != nil {
		fmt.Fprintf(stderr, "oncegen verify: %v\n", err)
		return exitEnv
	}
	fmt.Fprintf(stdout, "oncegen verify: once's tables are at schema step %d (this runtime's latest: %d)\n", step, onceschema.LatestStep())
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

// atLine names l's position in err, which stays an input error if it was one.
func atLine(l generator.GenerateLine, err error) error {
	err = fmt.Errorf("%s: //go:generate oncegen: %w", l.Pos, err)
	if errors.As(err, new(inputError)) {
		return inputError{err}
	}
	return err
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
