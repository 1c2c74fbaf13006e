package outreach_test

import (
	"context"
	"fmt"
	"testing"
	"time"

	"github.com/oncekit/once/examples/internal/migrations"
	"github.com/oncekit/once/examples/internal/storm"
	"github.com/oncekit/once/examples/outreach"
	"github.com/oncekit/once/examples/outreach/internal/fixture"
)

// Every instance's worker ticks, 32 ticks at once across two instances: one walk of the
// users at a time (the lease), one digest per user per day (the forever guard), however
// often the day is walked again.
func TestDigest_TickStormSendsOneDigestPerUserPerDay(t *testing.T) {
	t.Parallel()
	e := setup(t)
	other := fixture.SeedBrand(t, e.db, "globex", "pro", start)
	creators := fixture.SeedCreators(t, e.db, 3)
	ctx := context.Background()
	// Yesterday, acme's conversations got two answers and globex's one.
	for i, b := range []fixture.Brand{e.brand, e.brand, other} {
		var thread int64
		err := e.db.QueryRow(ctx, `INSERT INTO outreach_threads (campaign_id, creator_id, user_id, token, created_at)
			VALUES ($1, $2, $3, $4, $5) RETURNING id`, b.CampaignID, creators[i], b.UserID, fmt.Sprintf("tok%d", i), start.Add(-48*time.Hour)).Scan(&thread)
		if err != nil {
			t.Fatal(err)
		}
		if _, err := e.db.Exec(ctx, `INSERT INTO inbound_emails (provider_message_id, thread_id, sender, body, received_at)
			VALUES ($1, $2, 'creator', 'yes', $3)`, fmt.Sprintf("m%d", i), thread, start.Add(-20*time.Hour)); err != nil {
			t.Fatal(err)
		}
	}
	b, _ := e.instance()
	workers := []*outreach.Worker{e.app.Worker(), b.Worker()}
	sent := make([]int, 32)
	storm.Run(32, func(i int) {
		n, err := workers[i%2].Tick(ctx)
		if err != nil {
			t.Error(err)
		}
		sent[i] = n
	})
	total := 0
	for _, n := range sent {
		total += n
	}
	if got := emails(t, e.mail)["digest"]; got != 2 || total != 2 {
		t.Errorf("digests at the provider: %d (ticks say %d), want 2: one per user", got, total)
	}
	// A later tick the same day walks the users again and sends nothing.
	if n, err := e.app.Worker().Tick(ctx); err != nil || n != 0 {
		t.Errorf("a later tick: sent %d, %v", n, err)
	}
	if got := emails(t, e.mail)["digest"]; got != 2 {
		t.Errorf("digests after a later tick: %d, want 2", got)
	}
	if leases := e.count(`SELECT count(*) FROM once.leases WHERE released_at IS NULL`); leases != 0 {
		t.Errorf("%d leases still held after the ticks", leases)
	}
}

// Every migration's down part undoes its up part: all the way down, the app's tables are
// gone, once's tables are kept with their rows (a generated down never drops them), and the
// migrations apply again.
func TestMigrations_DownAndUpAgain(t *testing.T) {
	t.Parallel()
	e := setup(t)
	ms, err := migrations.Files(outreach.Migrations())
	if err != nil {
		t.Fatal(err)
	}
	ctx := context.Background()
	if _, err := e.db.Exec(ctx, `INSERT INTO once.ledger (operation_id, operation, scope, key, kind, unit, quantity) VALUES (gen_random_uuid(), 'outreach.Send', '', 'k', 'usage', 'email', 1)`); err != nil {
		t.Fatal(err)
	}
	for i := len(ms) - 1; i >= 0; i-- {
		if _, err := e.db.Exec(ctx, ms[i].Down); err != nil {
			t.Fatalf("down %s: %v", ms[i].Version, err)
		}
	}
	if n := e.count(`SELECT count(*) FROM pg_tables WHERE schemaname = 'public' AND tablename <> 'outreach_migrations'`); n != 0 {
		t.Errorf("%d app tables left after every down migration", n)
	}
	if n := e.count(`SELECT count(*) FROM once.ledger WHERE operation = 'outreach.Send'`); n != 1 {
		t.Errorf("once.ledger holds %d of its rows after every down migration, want 1", n)
	}
	if _, err := e.db.Exec(ctx, `TRUNCATE outreach_migrations`); err != nil {
		t.Fatal(err)
	}
	if err := outreach.Migrate(ctx, e.db); err != nil {
		t.Fatalf("migrating up again: %v", err)
	}
	if err := outreach.Migrate(ctx, e.db); err != nil {
		t.Fatalf("migrating an up-to-date database: %v", err)
	}
}
