package once_test

import (
	"context"
	"errors"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	once "github.com/oncekit/once/runtime"
)

// requestStorm fires stormSize callers at once, released by one barrier, and returns their
// outcomes.
func requestStorm(t *testing.T, fire func(caller int) (once.Outcome, error)) []once.Outcome {
	t.Helper()
	outs := make([]once.Outcome, stormSize)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for i := range stormSize {
		wg.Go(func() {
			<-start
			out, err := fire(i)
			if err != nil {
				t.Errorf("caller %d: %v", i, err)
			}
			outs[i] = out
		})
	}
	close(start)
	wg.Wait()
	return outs
}

func countStatus(outs []once.Outcome, s once.Status) int {
	n := 0
	for _, o := range outs {
		if o.Status == s {
			n++
		}
	}
	return n
}

func TestRequest_ConcurrentCallersShareOneCallPerScope(t *testing.T) {
	t.Parallel()
	const scopes = 3
	var calls atomic.Int64
	g := once.Request{Name: "user.Load"}
	for s := range scopes {
		ctx := once.WithRequestScope(context.Background())
		var values sync.Map
		outs := requestStorm(t, func(caller int) (once.Outcome, error) {
			v, out, err := once.RequestValue(ctx, g, "user/7", func(context.Context) (int, error) {
				calls.Add(1)
				time.Sleep(10 * time.Millisecond) // still running while the others arrive
				return 100 + s, nil
			})
			values.Store(caller, v)
			return out, err
		})
		if ran, dup := countStatus(outs, once.Ran), countStatus(outs, once.Duplicate); ran != 1 || dup != stormSize-1 {
			t.Fatalf("scope %d: %d ran and %d duplicates, want 1 and %d", s, ran, dup, stormSize-1)
		}
		values.Range(func(k, v any) bool {
			if v != 100+s {
				t.Errorf("scope %d: caller %v got %v, want the shared result %d", s, k, v, 100+s)
			}
			return true
		})
	}
	if got := calls.Load(); got != scopes {
		t.Fatalf("the function ran %d times for %d scopes, want once per scope", got, scopes)
	}
}

// The negative control: a memo that checks, then calls, then stores (the usual hand-written
// cache) lets every caller that checked before the first store run the function. The
// barrier holds the window open until all have checked, so this fails every time.
func TestRequest_NegativeControl_CheckThenStoreMemoRunsEveryCaller(t *testing.T) {
	t.Parallel()
	var calls atomic.Int64
	var mu sync.Mutex
	memo := map[string]int{}
	b := newBarrier(stormSize)
	requestStorm(t, func(caller int) (once.Outcome, error) {
		mu.Lock()
		_, hit := memo["user/7"]
		mu.Unlock()
		if err := b.wait(context.Background()); err != nil {
			return once.Outcome{}, err
		}
		if hit {
			return once.Outcome{Status: once.Duplicate}, nil
		}
		calls.Add(1)
		mu.Lock()
		memo["user/7"] = caller
		mu.Unlock()
		return once.Outcome{Status: once.Ran}, nil
	})
	if got := calls.Load(); got != stormSize {
		t.Fatalf("the unguarded memo ran the function %d times, want all %d (the race this test must be able to see)", got, stormSize)
	}
}

func TestRequest_DifferentKeysAndNamesRunSeparately(t *testing.T) {
	t.Parallel()
	ctx := once.WithRequestScope(context.Background())
	var calls atomic.Int64
	fn := func(context.Context) (struct{}, error) { calls.Add(1); return struct{}{}, nil }
	for _, c := range []struct{ name, key string }{{"a", "1"}, {"a", "2"}, {"b", "1"}, {"a", "1"}} {
		if _, _, err := once.RequestValue(ctx, (once.Request{Name: c.name}), c.key, fn); err != nil {
			t.Fatal(err)
		}
	}
	if got := calls.Load(); got != 3 {
		t.Fatalf("%d calls, want 3 (one per name and key)", got)
	}
}

func TestRequest_CallersShareTheError(t *testing.T) {
	t.Parallel()
	ctx := once.WithRequestScope(context.Background())
	boom := errors.New("boom")
	var calls atomic.Int64
	g := once.Request{Name: "user.Load"}
	for i := range 3 {
		_, out, err := once.RequestValue(ctx, g, "k", func(context.Context) (int, error) { calls.Add(1); return 0, boom })
		if !errors.Is(err, boom) {
			t.Fatalf("call %d: error %v, want the shared call's error", i, err)
		}
		if want := map[bool]once.Status{true: once.Ran, false: once.Duplicate}[i == 0]; out.Status != want {
			t.Fatalf("call %d: status %v, want %v", i, out.Status, want)
		}
	}
	if calls.Load() != 1 {
		t.Fatalf("the failing function ran %d times, want 1", calls.Load())
	}
}

// Without a scope there is no promise to keep: that is an error, never a silent call.
func TestRequest_NoScopeIsAnError(t *testing.T) {
	t.Parallel()
	called := false
	_, _, err := once.RequestValue(context.Background(), (once.Request{Name: "user.Load"}), "k", func(context.Context) (int, error) {
		called = true
		return 1, nil
	})
	if !errors.Is(err, once.ErrNoRequestScope) || called {
		t.Fatalf("error %v, called %v; want ErrNoRequestScope and no call", err, called)
	}
}

func TestRequest_ScopeIsKeptWhenAppliedTwice(t *testing.T) {
	t.Parallel()
	outer := once.WithRequestScope(context.Background())
	inner := once.WithRequestScope(outer)
	g := once.Request{Name: "n"}
	once.RequestValue(outer, g, "k", func(context.Context) (int, error) { return 1, nil })
	v, out, err := once.RequestValue(inner, g, "k", func(context.Context) (int, error) { return 2, nil })
	if err != nil || out.Status != once.Duplicate || v != 1 {
		t.Fatalf("got %v, %v, %v; want the outer scope's result as a duplicate", v, out.Status, err)
	}
}

func TestRequest_WaiterWithEndedContextStopsWaiting(t *testing.T) {
	t.Parallel()
	ctx := once.WithRequestScope(context.Background())
	g := once.Request{Name: "slow"}
	running, release := make(chan struct{}), make(chan struct{})
	done := make(chan error, 1)
	go func() {
		_, _, err := once.RequestValue(ctx, g, "k", func(context.Context) (int, error) { close(running); <-release; return 1, nil })
		done <- err
	}()
	<-running
	wctx, cancel := context.WithTimeout(ctx, 20*time.Millisecond)
	defer cancel()
	_, _, err := once.RequestValue(wctx, g, "k", func(context.Context) (int, error) { t.Error("second call ran"); return 0, nil })
	if !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("waiter error %v, want its own context's deadline", err)
	}
	close(release)
	if err := <-done; err != nil {
		t.Fatalf("the running call failed: %v", err)
	}
}

func TestRequest_PanicReachesTheCallerAndFailsTheOthers(t *testing.T) {
	t.Parallel()
	ctx := once.WithRequestScope(context.Background())
	g := once.Request{Name: "panics"}
	func() {
		defer func() {
			if r := recover(); r != "kaboom" {
				t.Fatalf("recovered %v, want the function's panic", r)
			}
		}()
		once.RequestValue(ctx, g, "k", func(context.Context) (int, error) { panic("kaboom") })
	}()
	_, out, err := once.RequestValue(ctx, g, "k", func(context.Context) (int, error) { return 1, nil })
	if err == nil || !strings.Contains(err.Error(), "panicked") || out.Status != once.Duplicate {
		t.Fatalf("after a panic: %v, %v; want a duplicate with an error saying it panicked", out.Status, err)
	}
}

func TestRequest_TwoTypesUnderOneNameAreRefused(t *testing.T) {
	t.Parallel()
	ctx := once.WithRequestScope(context.Background())
	once.RequestValue(ctx, (once.Request{Name: "n"}), "k", func(context.Context) (int, error) { return 1, nil })
	_, _, err := once.RequestValue(ctx, (once.Request{Name: "n"}), "k", func(context.Context) (string, error) { return "", nil })
	if !errors.Is(err, once.ErrInvalid) {
		t.Fatalf("error %v, want ErrInvalid for a name shared by two result types", err)
	}
}
