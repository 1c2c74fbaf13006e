package once_test

import (
	"os"
	"testing"

	"github.com/oncekit/once/internal/pgtest"
)

// TestMain gives the package's tests one throwaway PostgreSQL cluster; each test then takes
// its own fresh database from it.
func TestMain(m *testing.M) {
	code := pgtest.Main(m)
	dropExampleDatabases()
	os.Exit(code)
}
