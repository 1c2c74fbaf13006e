package oncetest_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"testing"

	"github.com/jackc/pgx/v5"

	once "github.com/oncekit/once/runtime"
	"github.com/oncekit/once/runtime/oncetest"
)

// These tests use no PostgreSQL: they pass where no server can be had, under CI=true too,
// since nothing asks for one.

// mailer is the effect of the service below: an email API that counts what it sent.
type mailer struct {
	mu   sync.Mutex
	sent map[string]int // by provider key
	fail error
}

func (m *mailer) Send(_ context.Context, to, providerKey string) error {
	m.mu.Lock()
	defer m.mu.Unlock()
	if m.fail != nil {
		return m.fail
	}
	if m.sent == nil {
		m.sent = map[string]int{}
	}
	m.sent[providerKey]++
	return nil
}

func (m *mailer) total() int {
	m.mu.Lock()
	defer m.mu.Unlock()
	n := 0
	for _, c := range m.sent {
		n += c
	}
	return n
}

// signups is a service as an app writes it: Welcome sends a user's welcome email under a
// forever guard, the call a generated SendWelcomeOnce wrapper makes.
type signups struct {
	db   once.DB
	mail *mailer
}

func (s *signups) Welcome(ctx context.Context, userID int64, email string) (once.Outcome, error) {
	g := once.Forever{Name: "signup.SendWelcome"}
	return g.Do(ctx, s.db, once.Ref{Key: once.MustKey(userID)}, func(ctx context.Context) error {
		k, _ := once.ProviderKeyFrom(ctx)
		return s.mail.Send(ctx, email, k)
	})
}

func TestMemory_ServiceSendsTheWelcomeOnce(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := &signups{db: oncetest.Memory(), mail: &mailer{}}

	out, err := s.Welcome(ctx, 7, "ada@example.com")
	if err != nil || out.Status != once.Ran {
		t.Fatalf("first call: %v, %v; want ran", out.Status, err)
	}
	var wg sync.WaitGroup
	for range 32 {
		wg.Go(func() {
			if out, err := s.Welcome(ctx, 7, "ada@example.com"); err != nil || out.Status != once.Duplicate {
				t.Errorf("a retry: %v, %v; want duplicate", out.Status, err)
			}
		})
	}
	wg.Wait()
	if n := s.mail.total(); n != 1 {
		t.Fatalf("%d emails sent to one user, want 1", n)
	}
	if _, err := s.Welcome(ctx, 8, "grace@example.com"); err != nil {
		t.Fatal(err)
	}
	if n := s.mail.total(); n != 2 {
		t.Fatalf("%d emails sent to two users, want 2", n)
	}
}

func TestMemory_ServiceRetriesAFailedSend(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	s := &signups{db: oncetest.Memory(), mail: &mailer{fail: errors.New("smtp: 421 try again later")}}
	if out, err := s.Welcome(ctx, 7, "ada@example.com"); err == nil || out.Status != once.Ran {
		t.Fatalf("a failed send: %v, %v; want ran with the mailer's error", out.Status, err)
	}
	s.mail.fail = nil
	if out, err := s.Welcome(ctx, 7, "ada@example.com"); err != nil || out.Status != once.Ran {
		t.Fatalf("the retry: %v, %v; want ran: a failure that may pass releases the key", out.Status, err)
	}
	if n := s.mail.total(); n != 1 {
		t.Fatalf("%d emails sent, want 1", n)
	}
}

// Concurrent callers of many keys on one stand-in: each key's function runs once.
func TestMemory_ConcurrentKeysRunOnceEach(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := oncetest.Memory()
	var mu sync.Mutex
	runs := map[string]int{}
	var wg sync.WaitGroup
	for i := range 64 {
		wg.Go(func() {
			key := fmt.Sprint(i % 8)
			g := once.Forever{Name: "app.Export", Wait: 0}
			_, err := g.Do(ctx, db, once.Ref{Key: key}, func(context.Context) error {
				mu.Lock()
				runs[key]++
				mu.Unlock()
				return nil
			})
			if err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
	if len(runs) != 8 {
		t.Fatalf("%d keys ran, want 8", len(runs))
	}
	for k, n := range runs {
		if n != 1 {
			t.Errorf("key %s ran %d times, want 1", k, n)
		}
	}
}

// What needs a real transaction is refused, plainly, and nothing runs.
func TestMemory_RefusesWhatNeedsPostgreSQL(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	db := oncetest.Memory()
	ran := false
	txFn := func(context.Context, pgx.Tx) error { ran = true; return nil }

	_, txErr := once.Transaction{Name: "sub.Sync"}.Do(ctx, db, "cus_1", txFn)
	_, tableErr := once.Table{Name: "jobs.Enqueue", OnConflict: once.InFlight}.Do(ctx, db, txFn)
	_, execErr := db.Exec(ctx, "SELECT 1")
	_, queryErr := db.Query(ctx, "SELECT 1")
	_, beginErr := db.Begin(ctx)
	rowErr := db.QueryRow(ctx, "SELECT 1").Scan()
	var checkpointErr, stepErr error
	_, err := once.Forever{Name: "report.Build"}.Do(ctx, db, once.Ref{Key: "r/1"}, func(ctx context.Context) error {
		a, _ := once.AttemptFrom(ctx)
		checkpointErr = a.Checkpoint(ctx, db, "fetched", nil)
		_, stepErr = once.Step(ctx, db, a, "rendered", func(context.Context, pgx.Tx) (int, error) { ran = true; return 0, nil })
		return nil
	})
	if err != nil {
		t.Fatalf("the forever call around the checkpoints: %v", err)
	}
	for what, err := range map[string]error{
		"transaction guard": txErr, "table guard": tableErr, "Exec": execErr, "Query": queryErr,
		"Begin": beginErr, "QueryRow": rowErr, "Checkpoint": checkpointErr, "Step": stepErr,
	} {
		if !errors.Is(err, oncetest.ErrNoSQL) {
			t.Errorf("%s on the stand-in: %v; want an error wrapping oncetest.ErrNoSQL", what, err)
		}
	}
	if ran {
		t.Fatal("a function that needs a transaction ran on the stand-in")
	}
	t.Logf("a transaction guard on the stand-in: %v", txErr)
}

// ExampleMemory tests code around a guard without PostgreSQL.
func ExampleMemory() {
	ctx := context.Background()
	db := oncetest.Memory()
	g := once.Episode{Name: "alerts.CreditLow"}
	for range 2 {
		out, _ := g.Do(ctx, db, "serp-api", func(context.Context) error { return nil })
		fmt.Println(out.Status)
	}
	// Output:
	// ran
	// duplicate
}
