package once_test

import (
	"context"
	"fmt"
	"os"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/oncekit/once/internal/pgtest"
	"github.com/oncekit/once/runtime/onceschema"
)

// examplePool returns a pool on a fresh database with once's schema applied, for the
// package's examples. Examples have no *testing.T, so it drives pgtest with exampleTB.
// Unlike a test, an example cannot skip: without PostgreSQL it panics, saying why.
func examplePool() *pgxpool.Pool {
	t := &exampleTB{}
	pool := pgtest.NewDatabase(t).Pool(t, 4)
	if err := onceschema.Migrate(context.Background(), pool); err != nil {
		panic(err)
	}
	return pool
}

// exampleTB is the part of testing.TB that pgtest calls. Its cleanups run when the test
// binary ends (see dropExampleDatabases).
type exampleTB struct {
	testing.TB // left nil: pgtest calls only the methods below
}

var (
	exampleMu       sync.Mutex
	exampleCleanups []func()
)

func (*exampleTB) Helper() {}

func (*exampleTB) Fatalf(format string, args ...any) {
	panic("example: " + fmt.Sprintf(format, args...))
}

func (*exampleTB) Skipf(format string, args ...any) {
	panic("example needs PostgreSQL, like the tests (examples cannot skip): " + fmt.Sprintf(format, args...))
}

func (*exampleTB) Errorf(format string, args ...any) {
	fmt.Fprintf(os.Stderr, "example: "+format+"\n", args...)
}

func (*exampleTB) Cleanup(f func()) {
	exampleMu.Lock()
	defer exampleMu.Unlock()
	exampleCleanups = append(exampleCleanups, f)
}

// dropExampleDatabases runs the examples' cleanups, last first, on a server that outlives the
// test binary (ONCE_TEST_DATABASE_URL). A cluster the tests started themselves is already
// gone, and its databases with it.
func dropExampleDatabases() {
	if os.Getenv(pgtest.EnvURL) == "" {
		return
	}
	exampleMu.Lock()
	defer exampleMu.Unlock()
	for i := len(exampleCleanups) - 1; i >= 0; i-- {
		exampleCleanups[i]()
	}
}
