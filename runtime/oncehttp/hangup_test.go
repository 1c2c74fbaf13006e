package oncehttp_test

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/oncekit/once/internal/pgtest"
	"github.com/oncekit/once/runtime/oncehttp"
	"github.com/oncekit/once/runtime/onceschema"
)

// Clients that hang up while their request's claim is in flight leave no key at 409: 300
// requests on fresh keys, each client giving up after between a fifth of a request's round
// trip and three. A second after the storm no key is open, and every key's next request is
// answered 201, by running or by replaying, with no key's work done twice.
func TestMiddleware_ClientsThatHangUpLeaveNoKeyInFlight(t *testing.T) {
	t.Parallel()
	const calls, workers = 300, 8
	pool := pgtest.NewDatabase(t).Pool(t, 12)
	ctx := context.Background()
	if err := onceschema.Migrate(ctx, pool); err != nil {
		t.Fatal(err)
	}
	runs := make([]atomic.Int32, calls+workers*10)
	mw, err := oncehttp.New(oncehttp.Config{DB: pool, Account: bearer, Name: "hangup.create"})
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewServer(mw(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var i int
		fmt.Sscan(r.URL.Query().Get("i"), &i)
		runs[i].Add(1)
		w.WriteHeader(http.StatusCreated)
	})))
	t.Cleanup(srv.Close)
	post := func(ctx context.Context, i int) (int, error) {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, fmt.Sprintf("%s/?i=%d", srv.URL, i), nil)
		if err != nil {
			return 0, err
		}
		req.Header.Set("Authorization", "Bearer acct")
		req.Header.Set("Idempotency-Key", fmt.Sprint("k", i))
		resp, err := srv.Client().Do(req)
		if err != nil {
			return 0, err
		}
		io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return resp.StatusCode, nil
	}

	// A request's round trip, measured as the storm sends them: workers clients at once.
	var mu sync.Mutex
	var times []time.Duration
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			for j := range 10 {
				start := time.Now()
				if status, err := post(ctx, calls+w*10+j); err != nil || status != http.StatusCreated {
					t.Errorf("measuring: %d, %v", status, err)
				}
				mu.Lock()
				times = append(times, time.Since(start))
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	slices.Sort(times)
	rtt := times[len(times)/2]
	t.Logf("a request's round trip: %v", rtt)

	var next, hungUp atomic.Int64
	for range workers {
		wg.Go(func() {
			for {
				i := int(next.Add(1) - 1)
				if i >= calls {
					return
				}
				d := time.Duration(float64(rtt) * (0.2 + 2.8*float64(i)/float64(calls-1)))
				cctx, cancel := context.WithTimeout(ctx, d)
				status, err := post(cctx, i)
				cancel()
				switch {
				case errors.Is(err, context.DeadlineExceeded):
					hungUp.Add(1)
				case err != nil:
					t.Errorf("request %d: %v", i, err)
				case status != http.StatusCreated:
					t.Errorf("request %d: %d, want 201", i, status)
				}
			}
		})
	}
	wg.Wait()
	ran := 0
	for i := range calls {
		ran += int(runs[i].Load())
	}
	t.Logf("%d of %d clients hung up; the handler ran for %d keys", hungUp.Load(), calls, ran)
	time.Sleep(time.Second)
	var open int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM once.operations WHERE name = 'hangup.create' AND state = 'open'`).Scan(&open); err != nil {
		t.Fatal(err)
	}
	if open != 0 {
		t.Fatalf("%d keys left in flight with no request running them", open)
	}
	for i := range calls {
		if status, err := post(ctx, i); err != nil || status != http.StatusCreated {
			t.Fatalf("key %d: the next request got %d, %v; want 201", i, status, err)
		}
		if n := runs[i].Load(); n != 1 {
			t.Fatalf("key %d: the handler ran %d times, want once", i, n)
		}
	}
}
