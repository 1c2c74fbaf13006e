// Package migratetest applies the migrations oncegen writes with the real migration tools
// (goose, golang-migrate, and Atlas's directory checksum), up and down, on real PostgreSQL.
//
// It is its own module so that those tools stay out of once's go.mod: they are test
// dependencies of this check only. Run it from this directory: go test ./...
package migratetest
