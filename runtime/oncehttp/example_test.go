package oncehttp_test

import (
	"context"
	"errors"
	"log"
	"net/http"
	"strings"

	"github.com/jackc/pgx/v5/pgxpool"
	once "github.com/oncekit/once/runtime"
	"github.com/oncekit/once/runtime/oncehttp"
	"github.com/oncekit/once/runtime/onceschema"
)

// Wiring the middleware in front of a paid endpoint. The account comes from the
// application's authentication; the handler finds its operation in the request's context
// and passes the operation's provider key to the paid API.
func ExampleNew() {
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, "postgres:///app")
	if err != nil {
		log.Fatal(err)
	}
	if err := onceschema.Migrate(ctx, pool); err != nil {
		log.Fatal(err)
	}
	idempotent, err := oncehttp.New(oncehttp.Config{
		DB:       pool,
		Name:     "reports.generate",
		Required: true,
		Account: func(r *http.Request) (string, error) {
			// In a real application: the session's or the API key's account.
			if a, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer "); ok {
				return a, nil
			}
			return "", errors.New("not signed in")
		},
	})
	if err != nil {
		log.Fatal(err)
	}
	generate := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		a, _ := once.AttemptFrom(r.Context())
		_ = a.ProviderKey("model-call") // the Idempotency-Key to send to the model API
		a.Record(once.LedgerEntry{Kind: "usage", Unit: "report", Quantity: 1})
		w.WriteHeader(http.StatusCreated)
	})
	http.Handle("POST /reports", idempotent(generate))
	log.Fatal(http.ListenAndServe("localhost:8080", nil))
}
