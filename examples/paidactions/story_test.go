package paidactions_test

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/oncekit/once/examples/internal/migrated"
	"github.com/oncekit/once/examples/internal/storm"
	"github.com/oncekit/once/examples/internal/tally"
	"github.com/oncekit/once/examples/paidactions"
	"github.com/oncekit/once/examples/paidactions/naive"
	"github.com/oncekit/once/internal/fakeprovider"
)

// effects is what one scene of the story left behind: the lasting things a duplicate costs.
type effects struct {
	transactions, providerWork, ledger int
	billedMicros                       int64
}

// usd shows an amount of micro-dollars as dollars.
func usd(micros int64) string { return fmt.Sprintf("$%.2f", float64(micros)/1e6) }

// The databases every scene starts from: the editor's migrated, the naive editor's tables.
var (
	editorDB = migrated.Database("paidactions_story", paidactions.Migrate)
	naiveDB  = migrated.Database("paidactions_naive", naive.Migrate)
)

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
	e := &editor{provider: fakeprovider.New(t)}
	client := &http.Client{Transport: &http.Transport{}, Timeout: 30 * time.Second}
	if isNaive {
		e.pool = naiveDB.New(t)
		store := &naive.Store{DB: e.pool}
		e.api = httptest.NewServer(naive.NewServer(store))
		w := &naive.Worker{Store: store, ProviderURL: e.provider.URL, HTTP: client}
		e.work = func(ctx context.Context) error { return drain(ctx, w.Step) }
		e.hold = func(n int) { store.BeforeCreate = storm.Hold(t, n) }
	} else {
		e.pool = editorDB.New(t)
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
	storm.Run(n, func(int) {
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

// TestStory runs the story end to end against the editor and its naive twin, one scene
// after another, each on fresh databases, and prints what each paid for (go test -run
// '^TestStory$' -v). Every number in the table is asserted as it is entered.
func TestStory(t *testing.T) {
	t.Parallel()
	const clicks = 32
	tab := tally.New(t, "paidactions: a paid click is a transaction (lasting effects, counted)", "editor", "naive")
	defer tab.Print()
	rows := func(got [2]effects, want [2]effects) {
		tab.Row("transactions", tally.Is(got[0].transactions, want[0].transactions), tally.Is(got[1].transactions, want[1].transactions))
		tab.Row("provider jobs", tally.Is(got[0].providerWork, want[0].providerWork), tally.Is(got[1].providerWork, want[1].providerWork))
		tab.Row("ledger entries", tally.Is(got[0].ledger, want[0].ledger), tally.Is(got[1].ledger, want[1].ledger))
		tab.Row("billed", tally.Is(usd(got[0].billedMicros), usd(want[0].billedMicros)), tally.Is(usd(got[1].billedMicros), usd(want[1].billedMicros)))
	}

	// 1. Thirty-two identical Regenerate clicks at once. The naive editor's clicks are all
	// held between their look-up and their insert until every one has looked.
	var got [2]effects
	for i, isNaive := range []bool{false, true} {
		e := newEditor(t, isNaive)
		e.clicks(t, clicks, map[string]any{"action": "regenerate", "candidate_id": e.draft, "render_inputs_version": e.version, "instruction": "warmer light"})
		if err := e.work(t.Context()); err != nil {
			t.Fatal(err)
		}
		got[i] = e.count(t)
	}
	price := paidactions.Regenerate.Price()
	tab.Scene(fmt.Sprintf("%d identical Regenerate clicks at once", clicks))
	rows(got, [2]effects{{1, 1, 1, price}, {clicks, clicks, clicks, clicks * price}})

	// 2. One Render, whose provider answer is lost on the way back: the editor's recovery
	// job asks again with the same key; the naive worker retries with a new one.
	for i, isNaive := range []bool{false, true} {
		e := newEditor(t, isNaive)
		e.provider.DropAfterAccept(1)
		e.clicks(t, 1, map[string]any{"action": "render", "candidate_id": e.draft, "render_inputs_version": e.version})
		if err := e.work(t.Context()); err != nil {
			t.Fatal(err)
		}
		got[i] = e.count(t)
	}
	price = paidactions.Render.Price()
	tab.Scene("one Render, its answer lost and recovered")
	rows(got, [2]effects{{1, 1, 1, price}, {1, 2, 2, 2 * price}})
}
