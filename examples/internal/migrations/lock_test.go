package migrations

import (
	"context"
	"testing"
	"testing/fstest"

	"github.com/oncekit/once/examples/internal/storm"
	"github.com/oncekit/once/internal/pgtest"
)

// The negative control for the advisory lock: instances that apply the same file at once
// without it all try, and all but one fail.
func TestApply_WithoutTheLockInstancesCollide(t *testing.T) {
	t.Parallel()
	const instances = 8
	ctx := context.Background()
	db := pgtest.NewDatabase(t).Pool(t, instances)
	if _, err := db.Exec(ctx, `CREATE TABLE app_migrations (version text PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`); err != nil {
		t.Fatal(err)
	}
	ms, err := Files(fstest.MapFS{"0001_app.up.sql": {Data: []byte("CREATE TABLE orders (id bigint PRIMARY KEY);\n")}})
	if err != nil {
		t.Fatal(err)
	}
	errs := storm.Collect(instances, func(int) error {
		conn, err := db.Acquire(ctx)
		if err != nil {
			return err
		}
		defer conn.Release()
		return apply(ctx, conn.Conn(), "app_migrations", ms[0])
	})
	failed := 0
	for _, err := range errs {
		if err != nil {
			failed++
		}
	}
	if failed != instances-1 {
		t.Fatalf("%d of %d unlocked instances failed, want all but one", failed, instances)
	}
}
