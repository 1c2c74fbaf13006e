package outreach_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/oncekit/once/examples/internal/storm"
	"github.com/oncekit/once/examples/outreach/internal/fakebilling"
)

// event is a billing webhook event; its object may carry a plan and status, which the app
// ignores.
func event(typ, customer, plan string) map[string]any {
	return map[string]any{"type": typ, "data": map[string]any{"object": map[string]any{
		"id": "obj_" + typ, "customer": customer, "plan": plan, "status": "active", "updated_at": start,
	}}}
}

// Thirty-two deliveries at once, to two instances, of events about one customer: duplicates,
// events about older states, an event type nobody subscribed to. The subscription ends at
// the billing provider's truth, with no record of processed events: each handled event was
// one read of the truth.
func TestBillingWebhook_AnyDeliveryOrderEndsAtTheTruth(t *testing.T) {
	t.Parallel()
	e := setup(t)
	_, second := e.instance()
	truth := fakebilling.State{Customer: e.brand.CustomerID, Plan: "team", Status: "active", UpdatedAt: start.Add(time.Hour)}
	e.billing.Set(truth)

	types := []string{"customer.subscription.updated", "customer.subscription.created", "invoice.paid", "customer.tax_id.created"}
	plans := []string{"free", "pro", "team"}
	handled := 0
	var events []map[string]any
	for i := range 32 {
		typ := types[i%len(types)]
		if typ != "customer.tax_id.created" {
			handled++
		}
		events = append(events, event(typ, e.brand.CustomerID, plans[i%len(plans)]))
	}
	codes := make([]int, len(events))
	storm.Run(len(events), func(i int) {
		url := e.url
		if i%2 == 1 {
			url = second
		}
		codes[i], _ = post(t, url+"/webhooks/billing", events[i])
	})
	if got := statuses(codes); got[http.StatusNoContent] != len(events) {
		t.Fatalf("answers: %v", got)
	}
	e.assertSubscription(truth.Plan, truth.Status, truth.UpdatedAt)
	if reads := e.billing.Reads(); reads != handled {
		t.Errorf("%d reads of the truth, want %d (one per handled event)", reads, handled)
	}

	// One delivery at a time, in the wrong order: an event about the newest state arrives
	// first, then one about an older state. Each is only a prompt to read.
	newest := fakebilling.State{Customer: e.brand.CustomerID, Plan: "pro", Status: "past_due", UpdatedAt: start.Add(2 * time.Hour)}
	e.billing.Set(newest)
	post(t, e.url+"/webhooks/billing", event("invoice.payment_failed", e.brand.CustomerID, "pro"))
	post(t, e.url+"/webhooks/billing", event("customer.subscription.updated", e.brand.CustomerID, "team"))
	e.assertSubscription(newest.Plan, newest.Status, newest.UpdatedAt)

	// The customer deleted at the provider: the row stays, on the free plan.
	e.billing.Delete(e.brand.CustomerID)
	post(t, e.url+"/webhooks/billing", map[string]any{"type": "customer.deleted", "data": map[string]any{"object": map[string]any{"id": e.brand.CustomerID}}})
	var plan, status string
	if err := e.db.QueryRow(context.Background(), `SELECT plan, status FROM subscriptions`).Scan(&plan, &status); err != nil {
		t.Fatal(err)
	}
	if plan != "free" || status != "deleted" {
		t.Errorf("after customer.deleted: %s %s, want free deleted", plan, status)
	}
}

func (e *env) assertSubscription(plan, status string, updated time.Time) {
	e.t.Helper()
	var p, s string
	var u time.Time
	if err := e.db.QueryRow(context.Background(), `SELECT plan, status, updated_at FROM subscriptions WHERE user_id = $1`, e.brand.UserID).Scan(&p, &s, &u); err != nil {
		e.t.Fatal(err)
	}
	if p != plan || s != status || !u.Equal(updated) {
		e.t.Errorf("subscription %s %s %s, want the truth: %s %s %s", p, s, u, plan, status, updated)
	}
}

// A plan change clicked 32 times at once is one change at the billing provider: the key is
// derived from the subscription's state. When the change has come back through the
// webhook, the subscription has moved on, and the next change is a new request.
func TestPlanChange_OneChangePerSubscriptionState(t *testing.T) {
	t.Parallel()
	e := setup(t)
	codes := make([]int, 32)
	storm.Run(32, func(i int) { codes[i], _ = e.do("POST", e.url, "/billing/plan", map[string]string{"plan": "pro"}) })
	if got := statuses(codes); got[http.StatusAccepted]+got[http.StatusConflict] != 32 || got[http.StatusAccepted] == 0 {
		t.Errorf("answers: %v, want 202 (and 409 while the first was in flight)", got)
	}
	if n := e.billing.Changes.Effects(); n != 1 {
		t.Fatalf("plan changes at the billing provider: %d, want 1", n)
	}

	// The provider applied it and says so: the subscription moves on.
	moved := start.Add(time.Minute)
	e.billing.Set(fakebilling.State{Customer: e.brand.CustomerID, Plan: "pro", Status: "active", UpdatedAt: moved})
	post(t, e.url+"/webhooks/billing", event("customer.subscription.updated", e.brand.CustomerID, ""))
	e.assertSubscription("pro", "active", moved)

	if code, body := e.do("POST", e.url, "/billing/plan", map[string]string{"plan": "team"}); code != http.StatusAccepted {
		t.Fatalf("the next change: %d %s", code, body)
	}
	log := e.billing.Changes.Log()
	if len(log) != 2 {
		t.Fatalf("plan changes at the billing provider: %d, want 2", len(log))
	}
	for i, want := range []time.Time{start.Add(-24 * time.Hour), moved} {
		key := fmt.Sprintf("plan-change-%d/%s", e.brand.UserID, want.UTC().Format(time.RFC3339Nano))
		if log[i].Key != key {
			t.Errorf("change %d's key %q, want %q: derived from the subscription's state", i+1, log[i].Key, key)
		}
	}
	var body struct{ Plan string }
	json.Unmarshal(log[1].Body, &body)
	if body.Plan != "team" || !strings.HasPrefix(log[1].Path, "/v1/subscriptions/") {
		t.Errorf("second change: %s %s", log[1].Path, log[1].Body)
	}
}

// Two deliveries about one customer, the first one's read of the truth made before the
// truth moved on and the second one's after: under the per-customer lock the second waits
// for the first to write, and its newer read is the last write. The same two syncs without
// the lock (the negative control) let the first, older read overwrite the newer state.
func TestSyncCustomer_TheLockMakesTheLastWriterTheLastReader(t *testing.T) {
	t.Parallel()
	for _, locked := range []bool{true, false} {
		e := setup(t)
		older := fakebilling.State{Customer: e.brand.CustomerID, Plan: "pro", Status: "active", UpdatedAt: start.Add(time.Hour)}
		newer := fakebilling.State{Customer: e.brand.CustomerID, Plan: "team", Status: "active", UpdatedAt: start.Add(2 * time.Hour)}
		e.billing.Set(older)
		firstRead, releaseFirst := make(chan struct{}), make(chan struct{})
		var reads atomic.Int32
		e.billing.BeforeAnswer = func(string) {
			if reads.Add(1) == 1 { // the first delivery's read: hold its answer
				close(firstRead)
				<-releaseFirst
			}
		}
		deliver := func(done chan<- error) {
			ctx := context.Background()
			if locked {
				_, _, err := e.app.SyncCustomerOnce(ctx, e.db, e.brand.CustomerID)
				done <- err
				return
			}
			done <- pgx.BeginFunc(ctx, e.db, func(tx pgx.Tx) error {
				_, err := e.app.SyncCustomer(ctx, tx, e.brand.CustomerID)
				return err
			})
		}
		first, second := make(chan error, 1), make(chan error, 1)
		go deliver(first)
		<-firstRead
		e.billing.Set(newer)
		go deliver(second)
		// Let the second delivery get as far as it can: blocked on the lock, or done.
		waitForLockOr(t, e, second)
		close(releaseFirst)
		for _, done := range []chan error{first, second} {
			if err := <-done; err != nil {
				t.Fatal(err)
			}
		}
		if locked {
			e.assertSubscription(newer.Plan, newer.Status, newer.UpdatedAt)
			continue
		}
		var plan string
		if err := e.db.QueryRow(context.Background(), `SELECT plan FROM subscriptions WHERE user_id = $1`, e.brand.UserID).Scan(&plan); err != nil {
			t.Fatal(err)
		}
		if plan != older.Plan {
			t.Errorf("without the lock: plan %q, want the older read's %q to have overwritten the newer one", plan, older.Plan)
		}
	}
}

// waitForLockOr returns once a session of the test's database waits on a lock, or once the
// second sync has finished (nothing made it wait); it puts the second sync's result back.
func waitForLockOr(t *testing.T, e *env, second chan error) {
	t.Helper()
	deadline := time.Now().Add(30 * time.Second)
	for {
		select {
		case err := <-second:
			second <- err
			return
		default:
		}
		var waiting bool
		if err := e.db.QueryRow(context.Background(), `SELECT EXISTS (SELECT 1 FROM pg_stat_activity
			WHERE datname = current_database() AND wait_event_type = 'Lock')`).Scan(&waiting); err != nil {
			t.Fatal(err)
		}
		if waiting {
			return
		}
		if time.Now().After(deadline) {
			t.Fatal("the second sync neither waited on a lock nor finished within 30s")
		}
		time.Sleep(2 * time.Millisecond)
	}
}
