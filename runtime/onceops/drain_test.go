package onceops_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/oncekit/once/internal/fakeprovider"
	once "github.com/oncekit/once/runtime"
	"github.com/oncekit/once/runtime/onceops"
)

// generateReport is a paid operation: one model call, then a follow-up to email the owner.
func generateReport(p *fakeprovider.Server, runs *int) func(context.Context) (string, error) {
	return func(ctx context.Context) (string, error) {
		a, _ := once.AttemptFrom(ctx)
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
func sendEmail(p *fakeprovider.Server, withKey bool) func(context.Context, onceops.FollowUp) error {
	return func(ctx context.Context, f onceops.FollowUp) error {
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
		g := once.Forever{Name: "reports.Generate", Retain: 24 * time.Hour}
		runs := 0
		ref := once.Ref{Scope: once.MustKey(c.name), Key: once.MustKey("ref-1")}
		if _, _, err := once.ForeverValue(ctx, pool, g, ref, generateReport(p, &runs)); err != nil {
			t.Fatal(err)
		}
		d := onceops.Drain{Deliver: map[string]func(context.Context, onceops.FollowUp) error{"email-owner": sendEmail(p, c.withKey)}, Backoff: time.Millisecond}
		p.DropAfterAccept(1)
		res, err := d.Run(ctx, pool)
		if err != nil || res.Failed < 1 {
			t.Fatalf("%s: first drain %+v, %v; want a failed delivery", c.name, res, err)
		}
		time.Sleep(10 * time.Millisecond) // past the backoff
		if res, err := d.Run(ctx, pool); err != nil || res.Delivered < 1 {
			t.Fatalf("%s: second drain %+v, %v; want the delivery", c.name, res, err)
		}
		if _, out, err := once.ForeverValue(ctx, pool, g, ref, generateReport(p, &runs)); err != nil || out.Status != once.Duplicate {
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
	g := once.Forever{Name: "reports.Generate"}
	const n = 40
	for i := range n {
		_, _, err := once.ForeverValue(ctx, pool, g, once.Ref{Key: "ref-" + strconv.Itoa(i)}, func(ctx context.Context) (int, error) {
			a, _ := once.AttemptFrom(ctx)
			return i, errors.Join(a.FollowUp("export", map[string]int{"report": i}), a.FollowUp("notify", nil))
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	var mu sync.Mutex
	delivered := map[string]int{}
	count := func(_ context.Context, f onceops.FollowUp) error {
		mu.Lock()
		defer mu.Unlock()
		delivered[f.ProviderKey]++
		return nil
	}
	d := onceops.Drain{Deliver: map[string]func(context.Context, onceops.FollowUp) error{"export": count, "notify": count}, Batch: 5}
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
	g := once.Forever{Name: "reports.Generate"}
	once.ForeverValue(ctx, pool, g, once.Ref{Key: "ref-1"}, func(ctx context.Context) (int, error) {
		a, _ := once.AttemptFrom(ctx)
		return 1, errors.Join(a.FollowUp("export", nil), a.FollowUp("archive", nil))
	})
	d := onceops.Drain{
		Deliver:     map[string]func(context.Context, onceops.FollowUp) error{"export": func(context.Context, onceops.FollowUp) error { return errors.New("bucket missing") }},
		Backoff:     time.Millisecond,
		MaxAttempts: 2,
	}
	var total onceops.DrainResult
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
	g := once.Forever{Name: "reports.Generate"}
	if _, _, err := once.ForeverValue(ctx, pool, g, once.Ref{Key: "ref-1"}, func(ctx context.Context) (int, error) {
		a, _ := once.AttemptFrom(ctx)
		return 1, a.FollowUp("export", nil)
	}); err != nil {
		t.Fatal(err)
	}
	d := onceops.Drain{Deliver: map[string]func(context.Context, onceops.FollowUp) error{
		"export": func(context.Context, onceops.FollowUp) error { return errors.New("bucket said \x00\xff") },
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
	g := once.Forever{Name: "reports.Generate"}
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
	once.ForeverValue(ctx, pool, g, once.Ref{Key: "released"}, enqueue(errors.New("retry me")))
	once.ForeverValue(ctx, pool, g, once.Ref{Key: "uncertain"}, enqueue(once.Uncertain(errors.New("lost"))))
	once.ForeverValue(ctx, pool, g, once.Ref{Key: "failed"}, enqueue(once.Terminal(errors.New("refused"))))
	once.ForeverValue(ctx, pool, g, once.Ref{Key: "done"}, enqueue(nil))
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
	g := once.Forever{Name: "reports.Generate", Retain: 24 * time.Hour}
	runs := 0
	if _, _, err := once.ForeverValue(ctx, pool, g, once.Ref{Scope: once.MustKey("acct-a"), Key: once.MustKey("ref-1")}, generateReport(p, &runs)); err != nil {
		t.Fatal(err)
	}
	d := onceops.Drain{Deliver: map[string]func(context.Context, onceops.FollowUp) error{"email-owner": sendEmail(p, true)},
		Backoff: time.Millisecond, MaxAttempts: 2}
	p.FailNext(2, 552) // mailbox full, before anything is sent
	for range 2 {
		if _, err := d.Run(ctx, pool); err != nil {
			t.Fatal(err)
		}
		time.Sleep(5 * time.Millisecond)
	}
	dead, err := onceops.ListDeadFollowUps(ctx, pool, "", 0)
	if err != nil || len(dead) != 1 || dead[0].Attempt != 2 || dead[0].LastError != "email provider answered 552" {
		t.Fatalf("ListDeadFollowUps = %+v, %v; want the email, dead after 2 attempts with its error", dead, err)
	}
	if res, _ := d.Run(ctx, pool); res.Delivered != 0 {
		t.Fatalf("a dead follow-up was delivered without an operator: %+v", res)
	}
	if err := onceops.ReviveFollowUp(ctx, pool, dead[0].ID); err != nil {
		t.Fatal(err)
	}
	if err := onceops.ReviveFollowUp(ctx, pool, dead[0].ID); !errors.Is(err, onceops.ErrNotDead) {
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
	if list, _ := onceops.ListDeadFollowUps(ctx, pool, "", 0); len(list) != 0 {
		t.Fatalf("still dead: %+v", list)
	}
	if err := onceops.ReviveFollowUp(ctx, pool, dead[0].ID); !errors.Is(err, onceops.ErrNotDead) {
		t.Fatalf("reviving a delivered follow-up: %v, want ErrNotDead", err)
	}
	if err := onceops.ReviveFollowUp(ctx, pool, 1<<40); !errors.Is(err, onceops.ErrNoFollowUp) {
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
	g := once.Forever{Name: "reports.Generate", Retain: time.Hour}
	for _, key := range []string{"delivered", "owed", "forgotten"} {
		_, _, err := once.ForeverValue(ctx, pool, g, once.Ref{Key: key}, func(ctx context.Context) (int, error) {
			a, _ := once.AttemptFrom(ctx)
			return 1, errors.Join(a.FollowUp("email-"+key, nil), a.Record(once.LedgerEntry{Kind: "usage", Unit: "report", Quantity: 1}))
		})
		if err != nil {
			t.Fatal(err)
		}
	}
	ok := func(context.Context, onceops.FollowUp) error { return nil }
	deliver := func(actions ...string) {
		t.Helper()
		d := onceops.Drain{Deliver: map[string]func(context.Context, onceops.FollowUp) error{}}
		for _, a := range actions {
			d.Deliver[a] = ok
		}
		if res, err := d.Run(ctx, pool); err != nil || res.Delivered != len(actions) {
			t.Fatalf("drain %v: %+v %v", actions, res, err)
		}
	}
	deliver("email-delivered", "email-forgotten")
	// Claimed three days ago (the reaper deletes only rows of days rolled up), expired now.
	if _, err := pool.Exec(ctx, `UPDATE once.operations SET expires_at = clock_timestamp() - interval '1 second',
	claimed_at = claimed_at - interval '3 days'`); err != nil {
		t.Fatal(err)
	}
	// A new claim of an expired key forgets the old operation and its delivered follow-ups.
	if _, out, err := once.ForeverValue(ctx, pool, g, once.Ref{Key: "forgotten"}, func(context.Context) (int, error) { return 2, nil }); err != nil || out.Status != once.Ran {
		t.Fatalf("new claim of an expired key: %+v %v", out, err)
	}
	if n, err := onceops.ReapExpired(ctx, pool, 0); err != nil || n != 2 {
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

// enqueueEmails settles n operations, each enqueuing one email-owner follow-up to a mailbox
// of its own.
func enqueueEmails(t *testing.T, pool *pgxpool.Pool, n int) {
	t.Helper()
	g := once.Forever{Name: "reports.Generate"}
	for i := range n {
		_, _, err := once.ForeverValue(context.Background(), pool, g, once.Ref{Key: "ref-" + strconv.Itoa(i)}, func(ctx context.Context) (int, error) {
			a, _ := once.AttemptFrom(ctx)
			return i, a.FollowUp("email-owner", map[string]string{"to": "owner-" + strconv.Itoa(i) + "@example.com"})
		})
		if err != nil {
			t.Fatal(err)
		}
	}
}

// followUpStates lists each follow-up as "state/attempts/last error", in the order enqueued.
func followUpStates(t *testing.T, pool *pgxpool.Pool) []string {
	t.Helper()
	rows, err := pool.Query(context.Background(), `SELECT state || '/' || attempts || '/' || coalesce(last_error, '') FROM once.followups ORDER BY id`)
	if err != nil {
		t.Fatal(err)
	}
	states, err := pgx.CollectRows(rows, pgx.RowTo[string])
	if err != nil {
		t.Fatal(err)
	}
	return states
}

// Three deploys in a row stop the drain (cancel its context) while it delivers the first
// follow-up of its batch. The rest of the batch was taken but not started: each deploy hands
// it back uncounted, so even with MaxAttempts 1 no follow-up dies of the deploys, and the
// next drain delivers every one, each email once. Counted as attempts (as a delivery on the
// stopped context would be), the four left by the first deploy would all be dead.
func TestDrain_StoppingHandsBackWhatItHadNotStarted(t *testing.T) {
	t.Parallel()
	pool := setup(t, 4)
	p := fakeprovider.New(t)
	const n = 5
	enqueueEmails(t, pool, n)
	send := sendEmail(p, true)
	stop := func() {}
	var attempts []int
	d := onceops.Drain{Deliver: map[string]func(context.Context, onceops.FollowUp) error{"email-owner": func(ctx context.Context, f onceops.FollowUp) error {
		attempts = append(attempts, f.Attempt)
		err := send(ctx, f)
		stop() // the deploy's signal arrives as this email is sent
		return err
	}}, Batch: 10, MaxAttempts: 1}
	for deploy := 1; deploy <= 3; deploy++ {
		ctx, cancel := context.WithCancel(context.Background())
		stop = cancel
		res, err := d.Run(ctx, pool)
		cancel()
		if err != nil {
			t.Fatalf("deploy %d: %v", deploy, err)
		}
		if want := (onceops.DrainResult{Delivered: 1, Released: n - deploy}); res != want {
			t.Fatalf("deploy %d: drain %+v, want %+v", deploy, res, want)
		}
	}
	want := []string{"delivered/1/", "delivered/1/", "delivered/1/", "pending/0/", "pending/0/"}
	if got := followUpStates(t, pool); !slices.Equal(slices.Sorted(slices.Values(got)), want) {
		t.Fatalf("after three deploys, follow-ups %q, want %q", got, want)
	}
	stop = func() {}
	if res, err := d.Run(context.Background(), pool); err != nil || res != (onceops.DrainResult{Delivered: 2}) {
		t.Fatalf("the drain after the deploys: %+v, %v; want the 2 left delivered", res, err)
	}
	if got := p.EffectsAt("/v1/emails"); got != n {
		t.Fatalf("%d emails, want %d", got, n)
	}
	if !slices.Equal(attempts, []int{1, 1, 1, 1, 1}) {
		t.Fatalf("deliveries were told attempts %v, want each the first", attempts)
	}
	for _, s := range followUpStates(t, pool) {
		if s != "delivered/1/" {
			t.Fatalf("follow-up %s, want delivered at the first attempt", s)
		}
	}
}

// A delivery the drain's own stop cut short (its error is the drain's context's) is handed
// back, not counted: it was not the delivery that failed. A delivery that fails of its own
// accord is counted, even as the drain stops, and so is one its own deadline cut short.
func TestDrain_ADeliveryCutShortByTheStopIsNotAFailure(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name    string
		deliver func(ctx context.Context, stop context.CancelFunc) error
		timeout time.Duration // the drain's deadline, 0 for none
		want    onceops.DrainResult
		state   string
	}{
		{name: "cut short by the drain's stop", deliver: func(ctx context.Context, stop context.CancelFunc) error {
			stop()
			<-ctx.Done()
			return fmt.Errorf("sending: %w", ctx.Err())
		}, want: onceops.DrainResult{Released: 1}, state: "pending/0/"},
		{name: "cut short by the drain's deadline", timeout: 500 * time.Millisecond, deliver: func(ctx context.Context, _ context.CancelFunc) error {
			<-ctx.Done()
			return fmt.Errorf("sending: %w", ctx.Err())
		}, want: onceops.DrainResult{Released: 1}, state: "pending/0/"},
		{name: "failed of its own as the drain stopped", deliver: func(ctx context.Context, stop context.CancelFunc) error {
			stop()
			return errors.New("mailbox full")
		}, want: onceops.DrainResult{Dead: 1}, state: "dead/1/mailbox full"},
		{name: "cut short by its own deadline", deliver: func(ctx context.Context, _ context.CancelFunc) error {
			tctx, cancel := context.WithTimeout(ctx, time.Millisecond)
			defer cancel()
			<-tctx.Done()
			return fmt.Errorf("sending: %w", tctx.Err())
		}, want: onceops.DrainResult{Dead: 1}, state: "dead/1/sending: context deadline exceeded"},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			pool := setup(t, 4)
			enqueueEmails(t, pool, 1)
			ctx, stop := context.WithCancel(context.Background())
			defer stop()
			if c.timeout > 0 {
				ctx, stop = context.WithTimeout(ctx, c.timeout)
				defer stop()
			}
			d := onceops.Drain{Deliver: map[string]func(context.Context, onceops.FollowUp) error{"email-owner": func(ctx context.Context, _ onceops.FollowUp) error {
				return c.deliver(ctx, stop)
			}}, MaxAttempts: 1}
			if res, err := d.Run(ctx, pool); err != nil || res != c.want {
				t.Fatalf("drain %+v, %v; want %+v", res, err, c.want)
			}
			if got := followUpStates(t, pool); len(got) != 1 || got[0] != c.state {
				t.Fatalf("follow-up %q, want %s", got, c.state)
			}
			if c.want.Released == 0 {
				return
			}
			var attempt int
			d.Deliver["email-owner"] = func(_ context.Context, f onceops.FollowUp) error { attempt = f.Attempt; return nil }
			if res, err := d.Run(context.Background(), pool); err != nil || res != (onceops.DrainResult{Delivered: 1}) || attempt != 1 {
				t.Fatalf("the next drain: %+v, %v, attempt %d; want it delivered at the first attempt", res, err, attempt)
			}
		})
	}
}

// A drain whose delivery outlasted Hold lost the follow-up to another drain, which delivered
// it and marked it. The first drain's delivery then ends, delivered or failed: its mark
// changes nothing, and its result counts nothing, since the follow-up's outcome is the other
// drain's.
func TestDrain_CountsOnlyWhatItMarked(t *testing.T) {
	t.Parallel()
	for _, c := range []struct {
		name string
		err  error
	}{{"the slow delivery succeeds", nil}, {"the slow delivery fails", errors.New("bucket missing")}} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			pool := setup(t, 4)
			ctx := context.Background()
			enqueueEmails(t, pool, 1)
			started, release := make(chan struct{}), make(chan struct{})
			slow := onceops.Drain{Deliver: map[string]func(context.Context, onceops.FollowUp) error{"email-owner": func(context.Context, onceops.FollowUp) error {
				close(started)
				<-release
				return c.err
			}}, Hold: 50 * time.Millisecond, MaxAttempts: 1}
			var res onceops.DrainResult
			var runErr error
			done := make(chan struct{})
			go func() {
				defer close(done)
				res, runErr = slow.Run(ctx, pool)
			}()
			<-started
			fast := onceops.Drain{Deliver: map[string]func(context.Context, onceops.FollowUp) error{"email-owner": func(context.Context, onceops.FollowUp) error { return nil }}}
			for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
				r, err := fast.Run(ctx, pool)
				if err != nil || time.Now().After(deadline) {
					close(release)
					t.Fatalf("the other drain: %+v, %v; the held follow-up was never taken over", r, err)
				}
				if r.Delivered == 1 {
					break
				}
			}
			close(release)
			<-done
			if runErr != nil || res != (onceops.DrainResult{}) {
				t.Fatalf("the drain that lost its hold: %+v, %v; want nothing counted", res, runErr)
			}
			if got := followUpStates(t, pool); len(got) != 1 || got[0] != "delivered/2/" {
				t.Fatalf("follow-up %q, want delivered by the second drain's attempt", got)
			}
		})
	}
}
