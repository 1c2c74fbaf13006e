// Command oncegen turns //once: directives into guard wrappers (once_gen.go in each package),
// migrations for review, an inventory of every declared promise, and a check of a live
// database.
//
// Usage:
//
//	oncegen [-check] [-migrations DIR [-once-migrations DIR] -format sql|goose|migrate|atlas]
//	        [-lock-timeout 5s] [-statement-timeout 1min] [-down-drops-once-tables] [-tags TAGS]
//	        [packages]
//	oncegen inventory [-format md|json] [packages]
//	oncegen verify -db DSN [packages]   (or: oncegen verify DSN [packages])
//
// Packages default to ./... . A module pins the tool in its go.mod with
//
//	go get -tool github.com/oncekit/once/cmd/oncegen
//
// which adds the line
//
//	tool github.com/oncekit/once/cmd/oncegen
//
// and then asks for generation, at the same version on every machine, with one line; go
// generate runs it in the package's directory, where ./... means that package and the ones
// below it, so the module's root package is the place for it:
//
//	//go:generate go tool oncegen
//
// Generation is all or nothing: on any error (a malformed directive, a key that does not
// type-check, a package that does not load or type-check, apart from its uses of what is
// about to be generated, here or by a later //go:generate line) oncegen writes nothing.
// oncegen reads its own previous output as empty, so a stale once_gen.go (a guarded
// function renamed or given another parameter) never stands in the way of regenerating it. A generated file is
// written only when its bytes differ; a file with oncegen's header that no directive
// produces any more is removed.
//
// With -migrations, oncegen compares the declarations with the snapshot kept in DIR
// (oncegen.snapshot.json) and writes a new migration holding only the difference, with its
// down part; each CREATE UNIQUE INDEX CONCURRENTLY gets a file of its own, outside any
// transaction. Each step of the runtime's schema the snapshot lacks gets a file of its own.
// A column the table already has is adopted, never dropped by a down; DDL is online (no
// volatile default on an existing table, CHECK NOT VALID then VALIDATE in a later file, a
// changed key's new index built before the old one is dropped); every transactional file
// sets -lock-timeout and -statement-timeout. A generated down never drops once's tables
// unless -down-drops-once-tables asks for it. A guard that vanished while another of the same kind and key appeared looks
// renamed, which would start its stored history afresh: oncegen refuses it and asks for
// name=, unless -allow-rename accepts it. Either way the snapshot records the guards as they
// now are (rewritten alone when no migration is due), so an accepted rename is reported
// once. A table= guard is never taken for a rename: its promise lives on the table's rows
// and index, which a new name leaves as they are.
//
// -once-migrations DIR2 (with -migrations DIR) writes the steps of once's own schema, the
// tables of schema once, to DIR2, numbered there on their own; DIR keeps the table=
// constraints (which belong to the app's own tables) and the snapshot. Use it when a tool
// reads DIR for the app's schema (sqlc's schema:, an ORM's model generator) and must not
// model once's tables: point the tool at DIR alone, make DIR2 a sibling of DIR rather than
// a directory inside it, and apply DIR2 as a migration set of its own, with a version
// table of its own, before DIR's:
//
//	goose -dir db/once -table once_goose_db_version postgres "$DATABASE_URL" up
//	migrate -path db/once -database "postgres://host/app?x-migrations-table=once_schema_migrations" up
//	atlas migrate apply --dir file://db/once --revisions-schema once --url "$DATABASE_URL"
//
// -check writes nothing: it prints a unified diff for each generated file that is stale,
// missing or orphaned (and, with -migrations, the migration that is due) and exits 1.
// Without -migrations it also checks the migrations of every //go:generate line of the
// packages' directories that runs oncegen with -migrations, read and run as go generate
// would (the files of the generate build tag and the tests included; in the package's
// directory, with the line's flags and packages), so a module whose migrations are named
// only there is checked whole, a newer runtime's schema step included. A line oncegen would
// refuse is bad input, named by its position.
//
// verify connects to DSN (by default $ONCE_DATABASE_URL) and lists each constraint the
// loaded packages rely on that the database lacks, holds INVALID or holds in another form,
// and exits 1 if there is any. It makes the runtime's check (onceschema.VerifyRequirements), the
// one a program makes at start-up with once.Verify over what its generated files
// registered, so the command and the program agree.
//
// Exit codes:
//
//	0  done; with -check, everything is up to date; for verify, nothing is missing
//	1  -check found a stale, missing or orphaned file or a due migration; verify found a problem
//	2  bad input: usage, a malformed directive, a key that does not type-check, a package that
//	   does not load (nothing was written)
//	3  the environment failed: a file could not be read or written, the database could not be
//	   reached
package main

import (
	"os"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stdout, os.Stderr))
}
