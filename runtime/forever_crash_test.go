package once_test

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/oncekit/once/internal/fakeprovider"
	"github.com/oncekit/once/internal/pgtest"
	once "github.com/oncekit/once/runtime"
	"github.com/oncekit/once/runtime/internal/crashtest"
	"github.com/oncekit/once/runtime/onceops"
)

// The child process learns its database and provider from these.
const (
	envForeverDSN      = "ONCE_FOREVER_DSN"
	envForeverProvider = "ONCE_FOREVER_PROVIDER"
)

// foreverChild is the child's side: a connection to the parent's database and the URL of
// the parent's fake provider.
type foreverChild struct {
	conn     *pgx.Conn
	provider string
}

func connectForeverChild(t *testing.T) foreverChild {
	conn, err := pgx.Connect(context.Background(), os.Getenv(envForeverDSN))
	if err != nil {
		t.Fatalf("child: %v", err)
	}
	return foreverChild{conn: conn, provider: os.Getenv(envForeverProvider)}
}

// startForeverChild prepares a database and starts the test's child on it, with the fake
// provider p (nil for none). It returns the parent's pool and the child, blocked in Ready.
func startForeverChild(t *testing.T, p *fakeprovider.Server) (*pgxpool.Pool, *crashtest.Child) {
	t.Helper()
	db := pgtest.NewDatabase(t)
	pool := db.Pool(t, 4)
	prepare(t, pool)
	env := map[string]string{envForeverDSN: db.URL}
	if p != nil {
		env[envForeverProvider] = p.URL
	}
	child, err := crashtest.Start(t, env)
	if err != nil {
		t.Fatal(err)
	}
	return pool, child
}

// payloadID reads the row id a child passed to Ready: an operation's (a UUID) or an open
// claim's (decimal), as Outcome.Claim and Outcome.Holder name them.
func payloadID(t *testing.T, payload string) string {
	t.Helper()
	if payload == "" || strings.ContainsAny(payload, " \t") {
		t.Fatalf("child's payload %q is not a row id", payload)
	}
	return payload
}

// crashStale is the stale window of the crash tests' guards: long enough that the parent
// reaches the dead child's claim within it on a loaded machine, short enough to wait out.
const crashStale = 2 * time.Second

// A holder SIGKILLed after its effect, before its settle: nobody knows whether the effect
// happened, so the claim ends uncertain and is listed, and nothing runs it again.
func TestForever_KilledHolderEndsUncertainAndIsListed(t *testing.T) {
	g := once.Forever{Name: "billing.Charge", Stale: crashStale}
	if crashtest.IsChild(t) {
		c := connectForeverChild(t)
		once.ForeverValue(context.Background(), c.conn, g, once.Ref{Key: "order/9"}, func(ctx context.Context) (string, error) {
			if err := effect(ctx, c.conn, "forever", "order/9", 1); err != nil {
				t.Fatalf("child: %v", err)
			}
			a, _ := once.AttemptFrom(ctx)
			crashtest.Ready(a.ID())
			return "", nil
		})
	}
	t.Parallel()
	pool, child := startForeverChild(t, nil)
	ctx := context.Background()
	handle := payloadID(t, child.Payload)
	if err := child.Kill(); err != nil {
		t.Fatal(err)
	}
	mustNotRun := func(context.Context) (string, error) {
		t.Error("the function ran again after its holder died")
		return "", nil
	}
	if _, out, err := once.ForeverValue(ctx, pool, g, once.Ref{Key: "order/9"}, mustNotRun); err != nil || out.Status != once.InFlight || out.Holder != handle {
		t.Fatalf("within the stale window: %+v, %v; want in flight on %s", out, err, handle)
	}
	time.Sleep(crashStale + 100*time.Millisecond)
	if _, out, err := once.ForeverValue(ctx, pool, g, once.Ref{Key: "order/9"}, mustNotRun); !errors.Is(err, once.ErrUncertain) || out.Holder != handle {
		t.Fatalf("after the stale window: %+v, %v; want ErrUncertain on %s", out, err, handle)
	}
	list, err := onceops.ListUncertain(ctx, pool, "billing.Charge", 10)
	if err != nil || len(list) != 1 || list[0].Key != "order/9" {
		t.Fatalf("ListUncertain = %+v, %v; want order/9", list, err)
	}
	if n := effects(t, pool, "forever", "order/9"); n != 1 {
		t.Fatalf("%d effects, want the dead child's 1", n)
	}
}

// A repeat-safe guard carries the operation's provider key to the provider, so the attempt
// that takes over a dead holder's claim repeats the request and the provider answers it
// from its record: one effect. The same takeover against a provider that cannot
// deduplicate makes two, which is why repeat-safety is declared, never assumed.
func TestForever_KilledHolderIsRetriedWhenRepeatSafe(t *testing.T) {
	g := once.Forever{Name: "billing.Charge", Stale: crashStale, RepeatSafe: true}
	charge := func(providerURL string) func(ctx context.Context) (string, error) {
		return func(ctx context.Context) (string, error) {
			key, _ := once.ProviderKeyFrom(ctx)
			r, err := fakeprovider.Post(ctx, providerURL, "/v1/charges", key, map[string]any{"order": "order/9", "amount": 500})
			return r.ID, err
		}
	}
	for _, c := range []struct {
		name    string
		opts    []fakeprovider.Option
		effects int
	}{{"deduplicating provider", nil, 1}, {"provider without idempotency", []fakeprovider.Option{fakeprovider.WithoutIdempotency()}, 2}} {
		t.Run(c.name, func(t *testing.T) {
			if crashtest.IsChild(t) {
				ch := connectForeverChild(t)
				once.ForeverValue(context.Background(), ch.conn, g, once.Ref{Key: "order/9"}, func(ctx context.Context) (string, error) {
					id, err := charge(ch.provider)(ctx)
					if err != nil {
						t.Fatalf("child: %v", err)
					}
					crashtest.Ready(id)
					return id, nil
				})
			}
			t.Parallel()
			p := fakeprovider.New(t, c.opts...)
			pool, child := startForeverChild(t, p)
			if err := child.Kill(); err != nil {
				t.Fatal(err)
			}
			time.Sleep(crashStale + 100*time.Millisecond)
			id, out, err := once.ForeverValue(context.Background(), pool, g, once.Ref{Key: "order/9"}, charge(p.URL))
			if err != nil || out.Status != once.Ran {
				t.Fatalf("after the stale window: %+v, %v; want the claim taken over", out, err)
			}
			if c.effects == 1 && id != child.Payload {
				t.Fatalf("charge %s, want the dead child's %s replayed by the provider", id, child.Payload)
			}
			if r := operationState(t, pool, out.Claim); r.state != "done" || r.attempts != 2 {
				t.Fatalf("operation %+v, want done on attempt 2", r)
			}
			if p.Effects() != c.effects {
				t.Fatalf("%d charges, want %d", p.Effects(), c.effects)
			}
		})
	}
}

// A holder SIGKILLed mid-effect, with the guard's defaults on a pool: its claim shows no more
// life, and the next caller is told so within a minute (the default window is 45 s from the
// last sign of life), not after 20 minutes: uncertain, or, when the effect is repeat-safe, it
// runs again.
func TestForever_KilledHolderIsNoticedWithinAMinuteByDefault(t *testing.T) {
	for _, repeatSafe := range []bool{false, true} {
		name := map[bool]string{false: "uncertain", true: "repeat-safe runs again"}[repeatSafe]
		t.Run(name, func(t *testing.T) {
			g := once.Forever{Name: "billing.Charge", RepeatSafe: repeatSafe}
			if crashtest.IsChild(t) {
				pool, err := pgxpool.New(context.Background(), os.Getenv(envForeverDSN))
				if err != nil {
					t.Fatalf("child: %v", err)
				}
				once.ForeverValue(context.Background(), pool, g, once.Ref{Key: "order/9"}, func(ctx context.Context) (string, error) {
					if err := effect(ctx, pool, "forever", "order/9", 1); err != nil {
						t.Fatalf("child: %v", err)
					}
					crashtest.Ready("")
					return "", nil
				})
			}
			t.Parallel()
			pool, child := startForeverChild(t, nil)
			ctx := context.Background()
			if err := child.Kill(); err != nil {
				t.Fatal(err)
			}
			killed := time.Now()
			ran := false
			run := func(ctx context.Context) (string, error) { ran = true; return "again", nil }
			for {
				_, out, err := once.ForeverValue(ctx, pool, g, once.Ref{Key: "order/9"}, run)
				waited := time.Since(killed)
				if err == nil && out.Status == once.InFlight {
					if waited > time.Minute {
						t.Fatalf("still in flight %v after the holder was killed", waited)
					}
					time.Sleep(time.Second)
					continue
				}
				switch {
				case waited > time.Minute:
					t.Fatalf("noticed only %v after the kill", waited)
				case !repeatSafe && (!errors.Is(err, once.ErrUncertain) || ran):
					t.Fatalf("after %v: %+v, %v; want uncertain", waited, out, err)
				case repeatSafe && (err != nil || out.Status != once.Ran || !ran):
					t.Fatalf("after %v: %+v, %v; want the claim taken over and run", waited, out, err)
				}
				t.Logf("noticed %v after the kill: %+v, %v", waited.Round(time.Second), out, err)
				return
			}
		})
	}
}
