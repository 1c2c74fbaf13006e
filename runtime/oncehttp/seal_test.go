package oncehttp_test

import (
	"bytes"
	"context"
	"crypto/aes"
	"crypto/cipher"
	"crypto/rand"
	"encoding/base64"
	"encoding/json"
	"errors"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/oncekit/once/internal/fakeprovider"
	"github.com/oncekit/once/internal/pgtest"
	once "github.com/oncekit/once/runtime"
	"github.com/oncekit/once/runtime/oncehttp"
	"github.com/oncekit/once/runtime/onceschema"
)

// gcmSealer seals with AES-GCM, a fresh nonce in front of each ciphertext; it fails Seal or
// Open when told to.
type gcmSealer struct {
	aead               cipher.AEAD
	failSeal, failOpen atomic.Bool
}

func newGCMSealer(t *testing.T) *gcmSealer {
	block, err := aes.NewCipher([]byte("0123456789abcdef0123456789abcdef"))
	if err != nil {
		t.Fatal(err)
	}
	aead, err := cipher.NewGCM(block)
	if err != nil {
		t.Fatal(err)
	}
	return &gcmSealer{aead: aead}
}

func (s *gcmSealer) Seal(_ context.Context, plain []byte) ([]byte, error) {
	if s.failSeal.Load() {
		return nil, errors.New("kms: sealing key unavailable")
	}
	nonce := make([]byte, s.aead.NonceSize())
	rand.Read(nonce)
	return s.aead.Seal(nonce, nonce, plain, nil), nil
}

func (s *gcmSealer) Open(_ context.Context, sealed []byte) ([]byte, error) {
	if s.failOpen.Load() {
		return nil, errors.New("kms: opening key unavailable")
	}
	n := s.aead.NonceSize()
	if len(sealed) < n {
		return nil, errors.New("sealed record shorter than its nonce")
	}
	return s.aead.Open(nil, sealed[:n], sealed[n:], nil)
}

// intentsServer is an endpoint that creates a payment intent at a fake provider and answers
// with its client secret, behind the middleware configured with seal (nil for none).
func intentsServer(t *testing.T, seal once.Sealer) (*httptest.Server, *fakeprovider.Server, once.DB, string) {
	t.Helper()
	pool := pgtest.NewDatabase(t).Pool(t, 4)
	if err := onceschema.Migrate(context.Background(), pool); err != nil {
		t.Fatal(err)
	}
	stripe := fakeprovider.New(t)
	const secret = "pi_123_secret_Zq8vW2"
	mw, err := oncehttp.New(oncehttp.Config{DB: pool, Account: bearer, Name: "billing.intents", Seal: seal,
		Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	if err != nil {
		t.Fatal(err)
	}
	create := http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		at, _ := once.AttemptFrom(r.Context())
		call, err := stripe.Post(r.Context(), "/v1/payment_intents", at.ProviderKey("intent"), map[string]any{"amount": 500})
		if err != nil || call.Status != http.StatusOK {
			http.Error(w, "provider failed", http.StatusBadGateway)
			return
		}
		w.Header().Set("Content-Type", "application/json")
		w.WriteHeader(http.StatusCreated)
		json.NewEncoder(w).Encode(map[string]string{"id": call.ID, "client_secret": secret})
	})
	srv := httptest.NewServer(mw(create))
	t.Cleanup(srv.Close)
	return srv, stripe, pool, secret
}

func postIntent(t *testing.T, srv *httptest.Server, key string) response {
	t.Helper()
	req, err := http.NewRequest(http.MethodPost, srv.URL, strings.NewReader(`{"amount":500}`))
	if err != nil {
		t.Fatal(err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Authorization", "Bearer acct-s")
	req.Header.Set("Idempotency-Key", key)
	resp, err := srv.Client().Do(req)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		t.Fatal(err)
	}
	return response{status: resp.StatusCode, header: resp.Header, body: string(b)}
}

// rowsHolding counts the rows of once.operations whose text, every column, holds s.
func rowsHolding(t *testing.T, db once.DB, s string) int {
	t.Helper()
	var n int
	err := db.QueryRow(context.Background(),
		`SELECT count(*) FROM once.operations WHERE row_to_json(operations)::text LIKE '%' || $1 || '%'`, s).Scan(&n)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// A response carrying a secret, recorded with Config.Seal, is replayed whole to a retry, and
// neither the secret nor the recorded body is in once.operations; without Seal the body is
// there (the negative control: the record keeps the body as base64).
func TestMiddleware_SealedResponseIsReplayedAndNotStoredInTheClear(t *testing.T) {
	t.Parallel()
	for _, sealed := range []bool{false, true} {
		var seal once.Sealer
		if sealed {
			seal = newGCMSealer(t)
		}
		srv, stripe, pool, secret := intentsServer(t, seal)
		first := postIntent(t, srv, "ref-1")
		again := postIntent(t, srv, "ref-1")
		if first.status != http.StatusCreated || !strings.Contains(first.body, secret) {
			t.Fatalf("sealed=%v: first: %d %q", sealed, first.status, first.body)
		}
		if again.status != http.StatusCreated || again.body != first.body || again.header.Get("Idempotent-Replayed") != "true" {
			t.Fatalf("sealed=%v: retry: %d %v %q; want the first response replayed", sealed, again.status, again.header, again.body)
		}
		if n := stripe.EffectsAt("/v1/payment_intents"); n != 1 {
			t.Fatalf("sealed=%v: %d intents created, want 1", sealed, n)
		}
		body := base64.StdEncoding.EncodeToString([]byte(first.body))
		var form *string
		if err := pool.QueryRow(context.Background(), `SELECT result_form FROM once.operations`).Scan(&form); err != nil {
			t.Fatal(err)
		}
		plainRows, secretRows := rowsHolding(t, pool, body), rowsHolding(t, pool, secret)
		switch {
		case sealed && (plainRows != 0 || secretRows != 0 || form == nil || *form != "sealed"):
			t.Fatalf("sealed: the body is in %d rows, the secret in %d, form %v; want neither, sealed", plainRows, secretRows, form)
		case !sealed && (plainRows != 1 || form != nil):
			t.Fatalf("plain: the body is in %d rows, form %v; want 1, NULL", plainRows, form)
		}
	}
}

// A Seal that fails leaves the response sent and the operation done: a retry does not create
// another intent, and gets 500 ProblemNotRecorded. An Open that fails answers 500 and leaves
// the record as it is: once Open works again, the retry gets the response.
func TestMiddleware_SealAndOpenFailures(t *testing.T) {
	t.Parallel()
	seal := newGCMSealer(t)
	srv, stripe, pool, secret := intentsServer(t, seal)

	seal.failSeal.Store(true)
	first := postIntent(t, srv, "ref-seal")
	if first.status != http.StatusCreated || !strings.Contains(first.body, secret) {
		t.Fatalf("first with Seal failing: %d %q; want the handler's response", first.status, first.body)
	}
	seal.failSeal.Store(false)
	again := postIntent(t, srv, "ref-seal")
	if again.status != http.StatusInternalServerError || again.problemType(t) != oncehttp.ProblemNotRecorded {
		t.Fatalf("retry after a failed Seal: %d %q; want 500 %s", again.status, again.body, oncehttp.ProblemNotRecorded)
	}
	if n := stripe.EffectsAt("/v1/payment_intents"); n != 1 {
		t.Fatalf("%d intents created, want 1", n)
	}

	ok := postIntent(t, srv, "ref-open")
	row := func() string {
		var s string
		if err := pool.QueryRow(context.Background(), `SELECT row_to_json(operations)::text FROM once.operations
WHERE key = $1`, once.MustKey("ref-open")).Scan(&s); err != nil {
			t.Fatal(err)
		}
		return s
	}
	before := row()
	seal.failOpen.Store(true)
	failed := postIntent(t, srv, "ref-open")
	if failed.status != http.StatusInternalServerError || failed.problemType(t) != oncehttp.ProblemInternal {
		t.Fatalf("retry with Open failing: %d %q; want 500 %s", failed.status, failed.body, oncehttp.ProblemInternal)
	}
	if after := row(); after != before {
		t.Fatalf("a failed Open changed the record:\n%s\n%s", before, after)
	}
	seal.failOpen.Store(false)
	if back := postIntent(t, srv, "ref-open"); back.status != http.StatusCreated || !bytes.Equal([]byte(back.body), []byte(ok.body)) {
		t.Fatalf("retry with Open back: %d %q; want %q", back.status, back.body, ok.body)
	}
	if n := stripe.EffectsAt("/v1/payment_intents"); n != 2 {
		t.Fatalf("%d intents created, want 2 (one per key)", n)
	}
	if n := rowsHolding(t, pool, secret); n != 0 {
		t.Fatalf("the secret is in %d rows, want none", n)
	}
}
