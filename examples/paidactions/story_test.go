package paidactions_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/oncekit/once/examples/paidactions"
	"github.com/oncekit/once/examples/paidactions/naive"
	"github.com/oncekit/once/internal/fakeprovider"
	"github.com/oncekit/once/internal/pgtest"
)

// effects is what one run of the story left behind: the lasting things a duplicate costs.
type effects struct {
	transactions, providerWork, ledger int
	billedMicros                       int64
}

func (e effects) String() string {
	return fmt.Sprintf("%3d transactions  %3d provider jobs  %3d ledger entries  $%.2f billed",
		e.transactions, e.providerWork, e.ledger, float64(e.billedMicros)/1e6)
}

// editor is one of the two editors, running on its own database and fake provider.
type editor struct {
	pool     *pgxpool.Pool
	provider *fakeprovider.Server
	api      *httptest.Server
	job      int64
	draft    int64
	version  int
	// work carries out every queued action, recovering lost answers where the editor can.
	work func(ctx context.Context) error
	// hold, when the editor has a window between its check and its insert, holds clicks in
	// it until n have arrived.
	hold func(n int)
}

func newEditor(t *testing.T, isNaive bool) *editor {
	t.Helper()
	ctx := t.Context()
	e := &editor{pool: pgtest.New(t), provider: fakeprovider.New(t)}
	client := &http.Client{Transport: &http.Transport{}, Timeout: 30 * time.Second}
	if isNaive {
		if err := naive.Migrate(ctx, e.pool); err != nil {
			t.Fatal(err)
		}
		store := &naive.Store{DB: e.pool}
		e.api = httptest.NewServer(naive.NewServer(store))
		w := &naive.Worker{Store: store, ProviderURL: e.provider.URL, HTTP: client}
		e.work = func(ctx context.Context) error { return drain(ctx, w.Step) }
		e.hold = func(n int) {
			var arrived atomic.Int32
			all := make(chan struct{})
			store.BeforeCreate = func() {
				if int(arrived.Add(1)) == n {
					close(all)
				}
				<-all
			}
		}
	} else {
		if err := paidactions.Migrate(ctx, e.pool); err != nil {
			t.Fatal(err)
		}
		e.api = httptest.NewServer(paidactions.NewServer(e.pool))
		w := &paidactions.Worker{DB: e.pool, Provider: &paidactions.Client{BaseURL: e.provider.URL, HTTP: client}}
		e.work = func(ctx context.Context) error {
			if err := drain(ctx, w.Step); err != nil {
				return err
			}
			return drain(ctx, w.Recover)
		}
		e.hold = func(int) {} // the claim is one insert: there is no window to hold clicks in
	}
	t.Cleanup(e.api.Close)
	var err error
	if e.job, e.draft, err = paidactions.CreateJob(ctx, e.pool, "acme", "spring ad"); err != nil {
		t.Fatal(err)
	}
	in := paidactions.RenderInputs{VoiceModelID: "voice-ana", ProductLock: &paidactions.ProductLock{ProductID: "sku-kettle"}}
	if e.version, _, err = paidactions.SaveRenderInputsOnce(ctx, e.pool, e.job, in); err != nil {
		t.Fatal(err)
	}
	return e
}

func drain(ctx context.Context, step func(context.Context) (bool, error)) error {
	for {
		did, err := step(ctx)
		if err != nil || !did {
			return err
		}
	}
}

// clicks sends n identical clicks at once.
func (e *editor) clicks(t *testing.T, n int, action map[string]any) {
	t.Helper()
	body, _ := json.Marshal(action)
	e.hold(n)
	start := make(chan struct{})
	var wg sync.WaitGroup
	for range n {
		wg.Go(func() {
			<-start
			req, _ := http.NewRequestWithContext(t.Context(), http.MethodPost, fmt.Sprintf("%s/jobs/%d/actions", e.api.URL, e.job), bytes.NewReader(body))
			req.Header.Set(paidactions.AccountHeader, "acme")
			resp, err := e.api.Client().Do(req)
			if err != nil {
				t.Error(err)
				return
			}
			resp.Body.Close()
			if resp.StatusCode != http.StatusAccepted {
				t.Errorf("click: %d", resp.StatusCode)
			}
		})
	}
	close(start)
	wg.Wait()
}

func (e *editor) count(t *testing.T) effects {
	t.Helper()
	var c effects
	err := e.pool.QueryRow(t.Context(), `SELECT (SELECT count(*) FROM paid_actions), (SELECT count(*) FROM cost_ledger),
	(SELECT coalesce(sum(amount_usd_micros), 0) FROM cost_ledger)`).Scan(&c.transactions, &c.ledger, &c.billedMicros)
	if err != nil {
		t.Fatal(err)
	}
	c.providerWork = e.provider.Effects()
	return c
}

// The story end to end, on the editor and on its naive twin side by side: a storm of 32
// identical Regenerate clicks, then a Render whose provider answer is lost on the way
// back. Run with -v to see the counts.
func TestStory_DoubleClicksAndALostAnswer(t *testing.T) {
	t.Parallel()
	const clicks = 32
	report := func(format string, args ...any) {
		if testing.Verbose() {
			fmt.Printf(format+"\n", args...)
		}
	}
	for _, isNaive := range []bool{false, true} {
		name := "editor"
		if isNaive {
			name = "naive"
		}
		e := newEditor(t, isNaive)

		e.clicks(t, clicks, map[string]any{"action": "regenerate", "candidate_id": e.draft, "render_inputs_version": e.version, "instruction": "warmer light"})
		if err := e.work(t.Context()); err != nil {
			t.Fatal(err)
		}
		storm := e.count(t)

		e.provider.DropAfterAccept(1)
		e.clicks(t, 1, map[string]any{"action": "render", "candidate_id": e.draft, "render_inputs_version": e.version})
		if err := e.work(t.Context()); err != nil {
			t.Fatal(err)
		}
		lost := e.count(t)
		lost.transactions -= storm.transactions
		lost.providerWork -= storm.providerWork
		lost.ledger -= storm.ledger
		lost.billedMicros -= storm.billedMicros

		report("%-6s %d identical Regenerate clicks:  %s", name, clicks, storm)
		report("%-6s one Render, answer lost:        %s", name, lost)

		if isNaive {
			if storm.providerWork <= 1 || storm.ledger <= 1 || lost.providerWork <= 1 || lost.ledger <= 1 {
				t.Errorf("naive: storm %v, lost answer %v: the naive editor should pay more than once", storm, lost)
			}
			continue
		}
		if want := (effects{1, 1, 1, paidactions.Regenerate.Price()}); storm != want {
			t.Errorf("editor, storm: %v, want %v", storm, want)
		}
		if want := (effects{1, 1, 1, paidactions.Render.Price()}); lost != want {
			t.Errorf("editor, lost answer: %v, want %v", lost, want)
		}
	}
}
