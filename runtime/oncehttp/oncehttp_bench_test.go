package oncehttp_test

import (
	"context"
	"fmt"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/oncekit/once/internal/pgtest"
	"github.com/oncekit/once/runtime/oncehttp"
	"github.com/oncekit/once/runtime/onceschema"
)

// BenchmarkMiddleware compares a handler that saves one row with the same handler behind the
// middleware, fresh keys and replays, serially and with 8 goroutines. Requests are served
// in-process (httptest.ResponseRecorder), so the difference is the middleware's own work:
// its claim and its settle (on fresh keys the insert goes alone; replays get a claim that
// reads the key's row first, see the runtime's claim_history.go).
//
//	go test -bench Middleware -run '^$' -benchtime 2000x ./runtime/oncehttp/
func BenchmarkMiddleware(b *testing.B) {
	pool := pgtest.NewDatabase(b).Pool(b, 18)
	ctx := context.Background()
	if err := onceschema.Migrate(ctx, pool); err != nil {
		b.Fatal(err)
	}
	if _, err := pool.Exec(ctx, `CREATE TABLE notes (id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY, body text NOT NULL)`); err != nil {
		b.Fatal(err)
	}
	save := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var id int64
		if err := pool.QueryRow(r.Context(), `INSERT INTO notes (body) VALUES ('note') RETURNING id`).Scan(&id); err != nil {
			http.Error(w, err.Error(), http.StatusInternalServerError)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		w.Write([]byte(`{"id":` + strconv.FormatInt(id, 10) + `}`))
	})
	mw, err := oncehttp.New(oncehttp.Config{DB: pool, Account: bearer})
	if err != nil {
		b.Fatal(err)
	}
	guarded := mw(save)
	var keys atomic.Int64
	fresh := func() string { return `"k` + strconv.FormatInt(keys.Add(1), 10) + `"` }
	replayed := func() string { return `"replayed"` }
	serve := func(h http.Handler, key func() string) error {
		req := httptest.NewRequest(http.MethodPost, "/notes", strings.NewReader(`{"body":"note"}`))
		req.Header.Set("Content-Type", "application/json")
		req.Header.Set("Authorization", "Bearer acct-a")
		req.Header.Set("Idempotency-Key", key())
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusCreated {
			return fmt.Errorf("status %d: %s", rec.Code, rec.Body)
		}
		return nil
	}
	for _, c := range []struct {
		name string
		h    http.Handler
		key  func() string
	}{{"handler", save, fresh}, {"middleware", guarded, fresh}, {"middleware-replay", guarded, replayed}} {
		b.Run(c.name, func(b *testing.B) {
			for b.Loop() {
				if err := serve(c.h, c.key); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(c.name+"-parallel", func(b *testing.B) {
			b.SetParallelism(4)
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					if err := serve(c.h, c.key); err != nil {
						b.Error(err)
						return
					}
				}
			})
		})
	}
	// The machine's load comes and goes between sub-benchmarks; alternating the two in one
	// loop puts them under the same load, and the ratio is what to read.
	b.Run("middleware-vs-handler", func(b *testing.B) {
		var spent [2]time.Duration
		for b.Loop() {
			for side, h := range []http.Handler{save, guarded} {
				start := time.Now()
				if err := serve(h, fresh); err != nil {
					b.Fatal(err)
				}
				spent[side] += time.Since(start)
			}
		}
		b.ReportMetric(float64(spent[0])/float64(b.N), "handler-ns/op")
		b.ReportMetric(float64(spent[1])/float64(b.N), "middleware-ns/op")
		b.ReportMetric(float64(spent[1])/float64(spent[0]), "ratio")
	})
}
