package once_test

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	once "github.com/oncekit/once/runtime"
)

// The provider key is stored at the far end: a key derived by one version must be the key
// the next version derives, or a retry after an upgrade charges again. These vectors pin it.
func TestProviderKey_PinnedVectors(t *testing.T) {
	t.Parallel()
	cases := []struct{ prefix, key, want string }{
		{"charge", "42", "charge-42"},
		{"answer", "6ba7b810-9dad-11d1-80b4-00c04fd430c8", "answer-6ba7b810-9dad-11d1-80b4-00c04fd430c8"},
		{"fee", once.MustKey("org", 7, "2026-11"), "fee-org/7/2026-11"},
		{"email", "héllo wörld", "email-h%C3%A9llo%20w%C3%B6rld"},
		{"x", "a%2Fb", "x-a%252Fb"},
		{"tab", "a\tb\nc", "tab-a%09b%0Ac"},
		{"long", strings.Repeat("a", 300), "long-" + strings.Repeat("a", 217) + "~fcf15a5d14b284b2efa226e8db372445"},
	}
	for _, c := range cases {
		if got := once.ProviderKey(c.prefix, c.key); got != c.want {
			t.Errorf("ProviderKey(%q, %q) = %q, want %q", c.prefix, c.key, got, c.want)
		}
	}
}

func TestProviderKey_LongKeysAreShortenedStablyAndStayDistinct(t *testing.T) {
	t.Parallel()
	base := strings.Repeat("x", 400)
	a, b := once.ProviderKey("p", base+"1"), once.ProviderKey("p", base+"2")
	if len(a) != once.MaxProviderKeyLen || len(b) != once.MaxProviderKeyLen {
		t.Fatalf("lengths %d and %d, want %d", len(a), len(b), once.MaxProviderKeyLen)
	}
	if a == b {
		t.Fatal("two long keys that differ only at the end shortened to the same key")
	}
	if once.ProviderKey("p", base+"1") != a {
		t.Fatal("shortening is not stable")
	}
	exact := strings.Repeat("y", once.MaxProviderKeyLen-2)
	if got := once.ProviderKey("p", exact); got != "p-"+exact {
		t.Fatalf("a key of exactly %d bytes was changed: %q", once.MaxProviderKeyLen, got)
	}
	for _, c := range once.ProviderKey("é", strings.Repeat("ü", 200)) {
		if c < '!' || c > '~' {
			t.Fatalf("shortened key holds %q, outside printable ASCII", c)
		}
	}
}

// fakeProvider is a payment API that honours idempotency keys the way Stripe documents:
// the first request with a key does the work, later ones get the recorded response.
type fakeProvider struct {
	*httptest.Server
	requests atomic.Int64
	mu       sync.Mutex
	charges  int            // lasting effects: charges created
	byKey    map[string]int // recorded charge per idempotency key
}

func newFakeProvider(t *testing.T) *fakeProvider {
	p := &fakeProvider{byKey: map[string]int{}}
	p.Server = httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		p.requests.Add(1)
		key := r.Header.Get("Idempotency-Key")
		p.mu.Lock()
		defer p.mu.Unlock()
		id, seen := p.byKey[key]
		if !seen || key == "" {
			p.charges++
			id = p.charges
			if key != "" {
				p.byKey[key] = id
			}
		}
		fmt.Fprintf(w, "ch_%d", id)
	}))
	t.Cleanup(p.Close)
	return p
}

func (p *fakeProvider) created() int {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.charges
}

// charge is the effect: a POST carrying the provider key from the context.
func charge(ctx context.Context, url string) (string, error) {
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, url+"/v1/charges", strings.NewReader("amount=500"))
	if err != nil {
		return "", err
	}
	k, ok := once.ProviderKeyFrom(ctx)
	if !ok {
		return "", fmt.Errorf("no provider key in the context")
	}
	req.Header.Set("Idempotency-Key", k)
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return "", err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(resp.Body)
	return string(body), err
}

func TestProvider_ConcurrentRetriesChargeOnceAtTheFarEnd(t *testing.T) {
	t.Parallel()
	fake := newFakeProvider(t)
	g := once.Provider{Prefix: "charge", TTL: 24 * time.Hour}
	var mu sync.Mutex
	ids := map[string]int{}
	requestStorm(t, func(caller int) (once.Outcome, error) {
		id, out, err := providerValue(context.Background(), g, "order/42", func(ctx context.Context) (string, error) {
			return charge(ctx, fake.URL)
		})
		mu.Lock()
		ids[id]++
		mu.Unlock()
		if err == nil && out.ProviderKey != "charge-order/42" {
			t.Errorf("caller %d: handle %q", caller, out.ProviderKey)
		}
		return out, err
	})
	if n := fake.created(); n != 1 {
		t.Fatalf("%d charges from %d retries, want exactly 1", n, stormSize)
	}
	if got := fake.requests.Load(); got != stormSize {
		t.Fatalf("the provider received %d requests, want all %d (the guard does not deduplicate here; the provider does)", got, stormSize)
	}
	if len(ids) != 1 {
		t.Fatalf("callers saw %d different charges, want one: %v", len(ids), ids)
	}
}

// The negative control: a key made fresh for every attempt (a random value, the mistake
// oncelint flags as ONCE002) gives the provider nothing to recognise, so every retry charges.
func TestProvider_NegativeControl_AFreshKeyPerAttemptChargesEveryRetry(t *testing.T) {
	t.Parallel()
	fake := newFakeProvider(t)
	requestStorm(t, func(int) (once.Outcome, error) {
		var b [16]byte
		rand.Read(b[:])
		ctx := once.WithProviderKey(context.Background(), "charge-"+hex.EncodeToString(b[:]))
		_, err := charge(ctx, fake.URL)
		return once.Outcome{Status: once.Ran}, err
	})
	if n := fake.created(); n != stormSize {
		t.Fatalf("%d charges with fresh keys, want all %d (the duplicates this test must be able to see)", n, stormSize)
	}
}

func TestProviderKeyFrom_EmptyContext(t *testing.T) {
	t.Parallel()
	if k, ok := once.ProviderKeyFrom(context.Background()); ok || k != "" {
		t.Fatalf("ProviderKeyFrom(empty) = %q, %v", k, ok)
	}
}
