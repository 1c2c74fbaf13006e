package faults

import (
	"context"
	"net/url"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/oncekit/once/internal/pgtest"
)

// A statement cut off by its deadline while the proxy resets every connection 5 ms after it
// opens: pgx's cancel request goes around the proxy, straight to PgBouncer, which still
// answers after each one.
func TestCancelDialer_CancelsGoAroundTheFaults(t *testing.T) {
	db := pgtest.NewPooledDatabase(t, "exec")
	ctx := context.Background()
	u, err := url.Parse(db.URL)
	if err != nil {
		t.Fatal(err)
	}
	proxy, err := NewProxy(u.Host)
	if err != nil {
		t.Fatal(err)
	}
	defer proxy.Close()
	d, err := newCancelDialer(proxy.Addr, u.Host)
	if err != nil {
		t.Fatal(err)
	}
	pooler := u.Host
	u.Host = proxy.Addr
	const rounds = 10
	for i := 0; i < rounds; i++ {
		cc, err := pgx.ParseConfig(u.String())
		if err != nil {
			t.Fatal(err)
		}
		cc.DialFunc = d.Dial
		conn, err := pgx.ConnectConfig(ctx, cc)
		if err != nil {
			t.Fatalf("round %d: connecting through the proxy: %v", i, err)
		}
		heal, err := proxy.Toxic("reset_peer", "upstream", map[string]int64{"timeout": 5})
		if err != nil {
			t.Fatal(err)
		}
		cut, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
		_, err = conn.Exec(cut, `SELECT pg_sleep(5)`)
		cancel()
		if err == nil {
			t.Fatalf("round %d: a 5 s sleep ended within a 200 ms deadline", i)
		}
		// The connection is given up in the background: its cancel request, then its close.
		<-conn.PgConn().CleanupDone()
		heal()
		straight, err := pgx.Connect(ctx, db.URL)
		if err != nil {
			t.Fatalf("round %d: PgBouncer at %s stopped answering after a cut-off statement's cancel request: %v", i, pooler, err)
		}
		if _, err := straight.Exec(ctx, `SELECT 1`); err != nil {
			t.Fatalf("round %d: PgBouncer at %s: %v", i, pooler, err)
		}
		straight.Close(ctx)
	}
	if n := d.Cancels.Load(); n < rounds {
		t.Fatalf("%d cancel requests went straight to %s for %d cut-off statements", n, pooler, rounds)
	}
}
