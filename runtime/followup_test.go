package once_test

import (
	"context"
	"encoding/json"
	"errors"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/oncekit/once/internal/fakeprovider"
	once "github.com/oncekit/once/runtime"
)

// generateReport is a paid operation: one model call, then a follow-up to email the owner.
func generateReport(p *fakeprovider.Server, runs *int) func(context.Context, *once.Attempt) (string, error) {
	return func(ctx context.Context, a *once.Attempt) (string, error) {
		*runs++
		r, err := p.Post(ctx, "/v1/generate", a.ProviderKey("generate"), map[string]string{"prompt": "q3 summary"})
		if err != nil {
			return "", err
		}
		return r.ID, a.FollowUp("email-owner", map[string]string{"to": "owner@example.com", "report": r.ID})
	}
}

// sendEmail delivers email-owner follow-ups through the provider; withKey says whether it
// passes the follow-up's provider key.
func sendEmail(p *fakeprovider.Server, withKey bool) func(context.Context, once.FollowUp) error {
	return func(ctx context.Context, f once.FollowUp) error {
		key := ""
		if withKey {
			key = f.ProviderKey
		}
		var msg map[string]string
		if err := json.Unmarshal(f.Payload, &msg); err != nil {
			return err
		}
		r, err := p.Post(ctx, "/v1/emails", key, msg)
		if err == nil && r.Status != 200 {
			err = errors.New("email provider answered " + strconv.Itoa(r.Status))
		}
		return err
	}
}

// The email provider accepts the first delivery and drops the connection: the drain records
// a failure and a later run delivers again, with the same provider key, so the owner gets
// one email. The paid operation is not run again. The negative control delivers without the
// key: two emails.
func TestFollowUp_FailedDeliveryIsRetriedAloneAndEmailsOnce(t *testing.T) {
	t.Parallel()
	pool := setup(t, 4)
	ctx := context.Background()
	for _, c := range []struct {
		name    string
		withKey bool
		emails  int
	}{{"with the follow-up's key", true, 1}, {"negative control: without a key", false, 2}} {
		p := fakeprovider.New(t)
		g := once.Operation[string]{Name: "reports.Generate"}
		runs := 0
		ref := once.OperationRef{Account: c.name, Reference: "ref-1"}
		if _, _, err := g.Do(ctx, pool, ref, generateReport(p, &runs)); err != nil {
			t.Fatal(err)
		}
		d := once.Drain{Deliver: map[string]func(context.Context, once.FollowUp) error{"email-owner": sendEmail(p, c.withKey)}, Backoff: time.Millisecond}
		p.DropAfterAccept(1)
		res, err := d.Run(ctx, pool)
		if err != nil || res.Failed < 1 {
			t.Fatalf("%s: first drain %+v, %v; want a failed delivery", c.name, res, err)
		}
		time.Sleep(10 * time.Millisecond) // past the backoff
		if res, err := d.Run(ctx, pool); err != nil || res.Delivered < 1 {
			t.Fatalf("%s: second drain %+v, %v; want the delivery", c.name, res, err)
		}
		if _, out, err := g.Do(ctx, pool, ref, generateReport(p, &runs)); err != nil || out.Status != once.Duplicate {
			t.Fatalf("%s: the client's retry: %+v, %v", c.name, out, err)
		}
		if got := p.EffectsAt("/v1/emails"); got != c.emails {
			t.Errorf("%s: %d emails, want %d", c.name, got, c.emails)
		}
		if got := p.EffectsAt("/v1/generate"); got != 1 || runs != 1 {
			t.Errorf("%s: %d model calls in %d runs, want 1 and 1", c.name, got, runs)
		}
	}
	var state string
	var attempts int
	pool.QueryRow(ctx, `SELECT state, attempts FROM once.followups WHERE scope = 'with the follow-up''s key'`).Scan(&state, &attempts)
	if state != "delivered" || attempts != 2 {
		t.Fatalf("follow-up %s after %d attempts, want delivered after 2", state, attempts)
	}
}

func TestDrain_ConcurrentDrainsDeliverEachFollowUpOnce(t *testing.T) {
	t.Parallel()
	pool := setup(t, 12)
	ctx := context.Background()
	g := once.Forever[int]{Name: "reports.Generate"}
	const n = 40
	for i := range n {
		_, _, err := g.Do(ctx, pool, "ref-"+strconv.Itoa(i), func(ctx context.Context) (int, error) {
			a, _ := once.AttemptFrom(ctx)
			return i, errors.Join(a.FollowUp("export", map[string]int{"report": i}), a.FollowUp("notify", nil))
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	var mu sync.Mutex
	delivered := map[string]int{}
	count := func(_ context.Context, f once.FollowUp) error {
		mu.Lock()
		defer mu.Unlock()
		delivered[f.ProviderKey]++
		return nil
	}
	d := once.Drain{Deliver: map[string]func(context.Context, once.FollowUp) error{"export": count, "notify": count}, Batch: 5}
	var wg sync.WaitGroup
	for range 4 {
		wg.Go(func() {
			if _, err := d.Run(ctx, pool); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if len(delivered) != 2*n {
		t.Fatalf("%d distinct follow-ups delivered, want %d", len(delivered), 2*n)
	}
	for k, c := range delivered {
		if c != 1 {
			t.Errorf("follow-up %s delivered %d times by concurrent drains", k, c)
		}
	}
}

func TestDrain_GivesUpAfterMaxAttemptsAndLeavesOtherActions(t *testing.T) {
	t.Parallel()
	pool := setup(t, 4)
	ctx := context.Background()
	g := once.Forever[int]{Name: "reports.Generate"}
	g.Do(ctx, pool, "ref-1", func(ctx context.Context) (int, error) {
		a, _ := once.AttemptFrom(ctx)
		return 1, errors.Join(a.FollowUp("export", nil), a.FollowUp("archive", nil))
	})
	d := once.Drain{
		Deliver:     map[string]func(context.Context, once.FollowUp) error{"export": func(context.Context, once.FollowUp) error { return errors.New("bucket missing") }},
		Backoff:     time.Millisecond,
		MaxAttempts: 2,
	}
	var total once.DrainResult
	for range 5 {
		res, err := d.Run(ctx, pool)
		if err != nil {
			t.Fatal(err)
		}
		total.Failed += res.Failed
		total.Dead += res.Dead
		time.Sleep(5 * time.Millisecond)
	}
	if total.Failed != 1 || total.Dead != 1 {
		t.Fatalf("%+v, want 1 failed then 1 dead", total)
	}
	rows, err := pool.Query(ctx, `SELECT action, state, coalesce(last_error, '') FROM once.followups ORDER BY action`)
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for rows.Next() {
		var action, state, lastErr string
		rows.Scan(&action, &state, &lastErr)
		got = append(got, action+":"+state+":"+lastErr)
	}
	if len(got) != 2 || got[0] != "archive:pending:" || got[1] != "export:dead:bucket missing" {
		t.Fatalf("follow-ups %q, want archive pending (no drain for it) and export dead with its error", got)
	}
}

// A delivery error whose text the column refuses (a NUL byte, invalid UTF-8: a provider's
// answer quoted) is recorded cleaned. Refused, it would fail the drain's Run for good: the
// follow-up taken again after Hold, its failure never recorded, never dead.
func TestDrain_RecordsADeliveryErrorTheColumnRefusesCleaned(t *testing.T) {
	t.Parallel()
	pool := setup(t, 4)
	ctx := context.Background()
	g := once.Forever[int]{Name: "reports.Generate"}
	if _, _, err := g.Do(ctx, pool, "ref-1", func(ctx context.Context) (int, error) {
		a, _ := once.AttemptFrom(ctx)
		return 1, a.FollowUp("export", nil)
	}); err != nil {
		t.Fatal(err)
	}
	d := once.Drain{Deliver: map[string]func(context.Context, once.FollowUp) error{
		"export": func(context.Context, once.FollowUp) error { return errors.New("bucket said \x00\xff") },
	}}
	if res, err := d.Run(ctx, pool); err != nil || res.Failed != 1 {
		t.Fatalf("drain: %+v, %v; want one failed delivery recorded", res, err)
	}
	var lastErr string
	if err := pool.QueryRow(ctx, `SELECT last_error FROM once.followups`).Scan(&lastErr); err != nil || lastErr != "bucket said \uFFFD" {
		t.Fatalf("last_error %q (%v), want the cleaned text", lastErr, err)
	}
}

func TestFollowUp_OnlyEnqueuedWithARecordedOutcome(t *testing.T) {
	t.Parallel()
	pool := setup(t, 4)
	ctx := context.Background()
	g := once.Forever[int]{Name: "reports.Generate"}
	enqueue := func(err error) func(context.Context) (int, error) {
		return func(ctx context.Context) (int, error) {
			a, _ := once.AttemptFrom(ctx)
			if ferr := a.FollowUp("notify", nil); ferr != nil {
				t.Fatal(ferr)
			}
			if ferr := a.FollowUp("notify", nil); !errors.Is(ferr, once.ErrInvalid) {
				t.Errorf("the same action twice: %v, want ErrInvalid", ferr)
			}
			return 0, err
		}
	}
	g.Do(ctx, pool, "released", enqueue(errors.New("retry me")))
	g.Do(ctx, pool, "uncertain", enqueue(once.Uncertain(errors.New("lost"))))
	g.Do(ctx, pool, "failed", enqueue(once.Terminal(errors.New("refused"))))
	g.Do(ctx, pool, "done", enqueue(nil))
	rows, err := pool.Query(ctx, `SELECT o.key FROM once.followups f JOIN once.operations o ON o.id = f.operation_id ORDER BY o.key`)
	if err != nil {
		t.Fatal(err)
	}
	var keys []string
	for rows.Next() {
		var k string
		rows.Scan(&k)
		keys = append(keys, k)
	}
	if len(keys) != 2 || keys[0] != "done" || keys[1] != "failed" {
		t.Fatalf("follow-ups enqueued for %q, want only done and failed", keys)
	}
}

// A follow-up that died (its mailbox was full on every delivery) is listed for an operator,
// who mends the cause and revives it: the next drain delivers it, once, with the same
// provider key, and MaxAttempts applies anew. The paid operation does not run again.
func TestReviveFollowUp_DeliversADeadFollowUpOnce(t *testing.T) {
	t.Parallel()
	pool := setup(t, 4)
	ctx := context.Background()
	p := fakeprovider.New(t)
	g := once.Operation[string]{Name: "reports.Generate"}
	runs := 0
	if _, _, err := g.Do(ctx, pool, once.OperationRef{Account: "acct-a", Reference: "ref-1"}, generateReport(p, &runs)); err != nil {
		t.Fatal(err)
	}
	d := once.Drain{Deliver: map[string]func(context.Context, once.FollowUp) error{"email-owner": sendEmail(p, true)},
		Backoff: time.Millisecond, MaxAttempts: 2}
	p.FailNext(2, 552) // mailbox full, before anything is sent
	for range 2 {
		if _, err := d.Run(ctx, pool); err != nil {
			t.Fatal(err)
		}
		time.Sleep(5 * time.Millisecond)
	}
	dead, err := once.ListDeadFollowUps(ctx, pool, "", 0)
	if err != nil || len(dead) != 1 || dead[0].Attempt != 2 || dead[0].LastError != "email provider answered 552" {
		t.Fatalf("ListDeadFollowUps = %+v, %v; want the email, dead after 2 attempts with its error", dead, err)
	}
	if res, _ := d.Run(ctx, pool); res.Delivered != 0 {
		t.Fatalf("a dead follow-up was delivered without an operator: %+v", res)
	}
	if err := once.ReviveFollowUp(ctx, pool, dead[0].ID); err != nil {
		t.Fatal(err)
	}
	if err := once.ReviveFollowUp(ctx, pool, dead[0].ID); !errors.Is(err, once.ErrNotDead) {
		t.Fatalf("reviving a pending follow-up: %v, want ErrNotDead", err)
	}
	p.FailNext(1, 552) // one more failure is within the new round's allowance
	for range 2 {
		if _, err := d.Run(ctx, pool); err != nil {
			t.Fatal(err)
		}
		time.Sleep(5 * time.Millisecond)
	}
	if got := p.EffectsAt("/v1/emails"); got != 1 || runs != 1 {
		t.Fatalf("%d emails, %d runs of the operation; want 1 and 1", got, runs)
	}
	if list, _ := once.ListDeadFollowUps(ctx, pool, "", 0); len(list) != 0 {
		t.Fatalf("still dead: %+v", list)
	}
	if err := once.ReviveFollowUp(ctx, pool, dead[0].ID); !errors.Is(err, once.ErrNotDead) {
		t.Fatalf("reviving a delivered follow-up: %v, want ErrNotDead", err)
	}
	if err := once.ReviveFollowUp(ctx, pool, 1<<40); !errors.Is(err, once.ErrNoFollowUp) {
		t.Fatalf("reviving an unknown id: %v, want ErrNoFollowUp", err)
	}
}

// Delivered follow-ups go with their operation when it expires (reaped, or forgotten by a
// new claim of its key); those still owed stay until delivered, and one delivered after its
// operation went is deleted then. The ledger stays throughout.
func TestReapExpired_DeletesDeliveredFollowUpsWithTheirOperation(t *testing.T) {
	t.Parallel()
	pool := setup(t, 4)
	ctx := context.Background()
	g := once.Forever[int]{Name: "reports.Generate", Retain: time.Hour}
	for _, key := range []string{"delivered", "owed", "forgotten"} {
		_, _, err := g.Do(ctx, pool, key, func(ctx context.Context) (int, error) {
			a, _ := once.AttemptFrom(ctx)
			return 1, errors.Join(a.FollowUp("email-"+key, nil), a.Record(once.LedgerEntry{Kind: "usage", Unit: "report", Quantity: 1}))
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	ok := func(context.Context, once.FollowUp) error { return nil }
	deliver := func(actions ...string) {
		t.Helper()
		d := once.Drain{Deliver: map[string]func(context.Context, once.FollowUp) error{}}
		for _, a := range actions {
			d.Deliver[a] = ok
		}
		if res, err := d.Run(ctx, pool); err != nil || res.Delivered != len(actions) {
			t.Fatalf("drain %v: %+v %v", actions, res, err)
		}
	}
	deliver("email-delivered", "email-forgotten")
	if _, err := pool.Exec(ctx, `UPDATE once.operations SET expires_at = clock_timestamp() - interval '1 second'`); err != nil {
		t.Fatal(err)
	}
	// A new claim of an expired key forgets the old operation and its delivered follow-ups.
	if _, out, err := g.Do(ctx, pool, "forgotten", func(context.Context) (int, error) { return 2, nil }); err != nil || out.Status != once.Ran {
		t.Fatalf("new claim of an expired key: %+v %v", out, err)
	}
	if n, err := once.ReapExpired(ctx, pool, 0); err != nil || n != 2 {
		t.Fatalf("ReapExpired = %d, %v; want the 2 expired operations", n, err)
	}
	followups := func() (states []string) {
		t.Helper()
		rows, err := pool.Query(ctx, `SELECT action || ':' || state FROM once.followups ORDER BY action`)
		if err != nil {
			t.Fatal(err)
		}
		for rows.Next() {
			var s string
			rows.Scan(&s)
			states = append(states, s)
		}
		return states
	}
	if got := followups(); len(got) != 1 || got[0] != "email-owed:pending" {
		t.Fatalf("follow-ups %q after reaping, want only the owed one", got)
	}
	deliver("email-owed")
	var left, ledger int
	pool.QueryRow(ctx, `SELECT (SELECT count(*) FROM once.followups), (SELECT count(*) FROM once.ledger)`).Scan(&left, &ledger)
	if left != 0 || ledger != 3 {
		t.Fatalf("%d follow-ups and %d ledger entries left, want 0 and 3", left, ledger)
	}
}
