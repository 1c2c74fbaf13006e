package fakeprovider_test

import (
	"context"
	"net/http"
	"sync"
	"testing"
	"time"

	"github.com/oncekit/once/internal/fakeprovider"
)

func TestPost_EachRequestWithoutKeyIsAnEffect(t *testing.T) {
	t.Parallel()
	p := fakeprovider.New(t)
	ctx := context.Background()
	for range 3 {
		r, err := p.Post(ctx, "/v1/emails", "", map[string]string{"to": "a@example.com"})
		if err != nil || r.Status != http.StatusOK || r.ID == "" {
			t.Fatalf("Post = %+v, %v", r, err)
		}
	}
	if p.Effects() != 3 || p.EffectsAt("/v1/emails") != 3 || p.EffectsAt("/v1/charges") != 0 {
		t.Fatalf("effects = %d (at /v1/emails %d), want 3", p.Effects(), p.EffectsAt("/v1/emails"))
	}
}

func TestPost_SameKeySameParamsIsReplayed(t *testing.T) {
	t.Parallel()
	p := fakeprovider.New(t)
	ctx := context.Background()
	first, err := p.Post(ctx, "/v1/charges", "k1", map[string]int{"amount": 500})
	if err != nil {
		t.Fatal(err)
	}
	second, err := p.Post(ctx, "/v1/charges", "k1", map[string]int{"amount": 500})
	if err != nil {
		t.Fatal(err)
	}
	if !second.Replayed || second.ID != first.ID || string(second.Body) != string(first.Body) || first.Replayed {
		t.Fatalf("first %+v, second %+v: want the second to replay the first", first, second)
	}
	if p.Effects() != 1 || p.Replays() != 1 || p.Requests() != 2 {
		t.Fatalf("effects %d, replays %d, requests %d; want 1, 1, 2", p.Effects(), p.Replays(), p.Requests())
	}
}

func TestPost_SameKeyOtherParamsIsRefused(t *testing.T) {
	t.Parallel()
	p := fakeprovider.New(t)
	ctx := context.Background()
	if _, err := p.Post(ctx, "/v1/charges", "k1", map[string]int{"amount": 500}); err != nil {
		t.Fatal(err)
	}
	for _, c := range []struct {
		path string
		body any
	}{{"/v1/charges", map[string]int{"amount": 501}}, {"/v1/refunds", map[string]int{"amount": 500}}} {
		r, err := p.Post(ctx, c.path, "k1", c.body)
		if err != nil {
			t.Fatal(err)
		}
		if r.Status != http.StatusBadRequest {
			t.Errorf("reuse at %s with %v: status %d, want 400", c.path, c.body, r.Status)
		}
	}
	if p.Effects() != 1 {
		t.Fatalf("effects = %d, want 1", p.Effects())
	}
}

// While the first request with a key is being performed, every other with the key gets 409.
// The first is held in progress until all the others have been answered.
func TestPost_ConcurrentSameKeyConflicts(t *testing.T) {
	t.Parallel()
	release := make(chan struct{})
	p := fakeprovider.New(t, fakeprovider.WithHold(release))
	ctx := context.Background()
	body := map[string]string{"prompt": "x"}
	first := make(chan fakeprovider.Reply, 1)
	go func() {
		r, err := p.Post(ctx, "/v1/generate", "same", body)
		if err != nil {
			t.Error(err)
		}
		first <- r
	}()
	for p.Requests() == 0 { // the first request has registered its key
		time.Sleep(time.Millisecond)
	}
	const others = 8
	var wg sync.WaitGroup
	statuses := make(chan int, others)
	for range others {
		wg.Go(func() {
			r, err := p.Post(ctx, "/v1/generate", "same", body)
			if err != nil {
				t.Error(err)
				return
			}
			statuses <- r.Status
		})
	}
	wg.Wait()
	close(release)
	close(statuses)
	counts := map[int]int{}
	for s := range statuses {
		counts[s]++
	}
	if r := <-first; r.Status != http.StatusOK || r.Replayed {
		t.Fatalf("first request: %+v, want the effect", r)
	}
	if counts[http.StatusConflict] != others {
		t.Fatalf("statuses %v while the first was in progress, want %d 409", counts, others)
	}
	if p.Effects() != 1 || p.Replays() != 0 {
		t.Fatalf("effects = %d, replays = %d; want 1 and 0", p.Effects(), p.Replays())
	}
	if r, err := p.Post(ctx, "/v1/generate", "same", body); err != nil || !r.Replayed {
		t.Fatalf("after the first finished: %+v, %v; want its replay", r, err)
	}
}

func TestDropAfterAccept_EffectHappensAnswerIsLost(t *testing.T) {
	t.Parallel()
	ctx := context.Background()
	t.Run("deduplicating", func(t *testing.T) {
		t.Parallel()
		p := fakeprovider.New(t)
		p.DropAfterAccept(1)
		if _, err := p.Post(ctx, "/v1/charges", "k", map[string]int{"amount": 1}); err == nil {
			t.Fatal("Post succeeded through a dropped connection")
		}
		if p.Effects() != 1 || !p.Log()[0].Dropped {
			t.Fatalf("effects %d (%+v), want 1 dropped", p.Effects(), p.Log())
		}
		r, err := p.Post(ctx, "/v1/charges", "k", map[string]int{"amount": 1})
		if err != nil || !r.Replayed || r.ID != p.Log()[0].ID {
			t.Fatalf("retry = %+v, %v; want a replay of %s", r, err, p.Log()[0].ID)
		}
		if p.Effects() != 1 {
			t.Fatalf("effects after retry = %d, want 1", p.Effects())
		}
	})
	t.Run("without idempotency", func(t *testing.T) {
		t.Parallel()
		p := fakeprovider.New(t, fakeprovider.WithoutIdempotency())
		p.DropAfterAccept(1)
		if _, err := p.Post(ctx, "/v1/charges", "k", map[string]int{"amount": 1}); err == nil {
			t.Fatal("Post succeeded through a dropped connection")
		}
		r, err := p.Post(ctx, "/v1/charges", "k", map[string]int{"amount": 1})
		if err != nil || r.Replayed {
			t.Fatalf("retry = %+v, %v; want a new effect", r, err)
		}
		if p.Effects() != 2 {
			t.Fatalf("effects = %d, want 2: a provider that cannot dedupe charges twice", p.Effects())
		}
	})
}

func TestFailNext_RefusesBeforeAnyEffect(t *testing.T) {
	t.Parallel()
	p := fakeprovider.New(t)
	p.FailNext(2, http.StatusServiceUnavailable)
	ctx := context.Background()
	for i := range 3 {
		r, err := p.Post(ctx, "/v1/emails", "k", map[string]string{"to": "x"})
		if err != nil {
			t.Fatal(err)
		}
		want := http.StatusServiceUnavailable
		if i == 2 {
			want = http.StatusOK
		}
		if r.Status != want {
			t.Fatalf("request %d: status %d, want %d", i+1, r.Status, want)
		}
	}
	if p.Effects() != 1 {
		t.Fatalf("effects = %d, want 1", p.Effects())
	}
}
