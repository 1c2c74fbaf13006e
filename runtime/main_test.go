package once_test

import (
	"flag"
	"os"
	"runtime"
	"strconv"
	"testing"

	"github.com/oncekit/once/internal/pgtest"
)

// TestMain gives the package's tests one throwaway PostgreSQL cluster; each test then takes
// its own fresh database from it.
//
// The tests mostly wait (on the database, on a TTL or a stale window running out), not on a
// CPU, so unless -parallel is given, more of them run at once than there are CPUs.
func TestMain(m *testing.M) {
	flag.Parse()
	given := false
	flag.Visit(func(f *flag.Flag) { given = given || f.Name == "test.parallel" })
	if !given {
		flag.Set("test.parallel", strconv.Itoa(max(8, runtime.GOMAXPROCS(0))))
	}
	code := pgtest.Main(m)
	dropExampleDatabases()
	os.Exit(code)
}
