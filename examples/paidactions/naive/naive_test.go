package naive

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/oncekit/once/examples/internal/migrated"
	"github.com/oncekit/once/examples/internal/storm"
	"github.com/oncekit/once/examples/paidactions"
	"github.com/oncekit/once/internal/fakeprovider"
	"github.com/oncekit/once/internal/pgtest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

type env struct {
	t        *testing.T
	pool     *pgxpool.Pool
	store    *Store
	provider *fakeprovider.Server
	api      *httptest.Server
	worker   *Worker
	job      int64
	draft    int64
	version  int
}

// migratedDB is the naive editor's database as every test starts from it: its tables, and
// acme's job with its draft candidate and complete render inputs (version 1).
var migratedDB = migrated.Database("naive", func(ctx context.Context, pool *pgxpool.Pool) error {
	if err := Migrate(ctx, pool); err != nil {
		return err
	}
	job, _, err := paidactions.CreateJob(ctx, pool, "acme", "spring ad")
	if err != nil {
		return err
	}
	in := paidactions.RenderInputs{VoiceModelID: "voice-ana", ProductLock: &paidactions.ProductLock{ProductID: "sku-kettle"}}
	_, _, err = paidactions.SaveRenderInputsOnce(ctx, pool, job, in)
	return err
})

func setup(t *testing.T) *env {
	t.Helper()
	ctx := t.Context()
	pool := migratedDB.New(t)
	var job, draft int64
	var v int
	if err := pool.QueryRow(ctx, `SELECT j.id, c.id, r.version FROM jobs j JOIN candidates c ON c.job_id = j.id JOIN render_inputs r ON r.job_id = j.id`).Scan(&job, &draft, &v); err != nil {
		t.Fatalf("the prepared job: %v", err)
	}
	store := &Store{DB: pool}
	provider := fakeprovider.New(t)
	api := httptest.NewServer(NewServer(store))
	t.Cleanup(api.Close)
	transport := &http.Transport{}
	t.Cleanup(transport.CloseIdleConnections)
	worker := &Worker{Store: store, ProviderURL: provider.URL, HTTP: &http.Client{Transport: transport, Timeout: 30 * time.Second}}
	return &env{t: t, pool: pool, store: store, provider: provider, api: api, worker: worker, job: job, draft: draft, version: v}
}

func (e *env) click(body any) (paidactions.Transaction, bool) {
	var out struct {
		paidactions.Transaction
		Duplicate bool `json:"duplicate"`
	}
	b, _ := json.Marshal(body)
	req, err := http.NewRequestWithContext(e.t.Context(), http.MethodPost, fmt.Sprintf("%s/jobs/%d/actions", e.api.URL, e.job), bytes.NewReader(b))
	if err != nil {
		e.t.Error(err)
		return out.Transaction, false
	}
	req.Header.Set(paidactions.AccountHeader, "acme")
	resp, err := e.api.Client().Do(req)
	if err != nil {
		e.t.Error(err)
		return out.Transaction, false
	}
	defer resp.Body.Close()
	if resp.StatusCode != http.StatusAccepted {
		e.t.Errorf("click: %d", resp.StatusCode)
	}
	if err := json.NewDecoder(resp.Body).Decode(&out); err != nil {
		e.t.Error(err)
	}
	return out.Transaction, !out.Duplicate
}

func (e *env) count(sql string) int {
	e.t.Helper()
	var n int
	if err := e.pool.QueryRow(e.t.Context(), sql).Scan(&n); err != nil {
		e.t.Fatal(err)
	}
	return n
}

func (e *env) drain() {
	e.t.Helper()
	for {
		did, err := e.worker.Step(e.t.Context())
		if err != nil {
			e.t.Fatal(err)
		}
		if !did {
			return
		}
	}
}

// The storm the editor survives, against the check-then-insert claim: 32 clicks of one
// action, each held between its look-up and its insert until all have looked (the window
// a busy day finds by chance). Every click claims, the provider is paid for every one,
// and the ledger shows them as ordinary charges.
func TestNaive_StormOfDuplicateClicksPaysForEachClick(t *testing.T) {
	t.Parallel()
	e := setup(t)
	const clicks = 32
	e.store.BeforeCreate = storm.Hold(t, clicks)
	action := map[string]any{"action": "regenerate", "candidate_id": e.draft, "render_inputs_version": e.version, "instruction": "warmer light"}
	var claimed atomic.Int32
	storm.Run(clicks, func(int) {
		if _, ok := e.click(action); ok {
			claimed.Add(1)
		}
	})
	e.drain()

	rows, effects, ledger := e.count(`SELECT count(*) FROM paid_actions`), e.provider.Effects(), e.count(`SELECT count(*) FROM cost_ledger`)
	t.Logf("%d identical clicks: %d claimed, %d paid_actions rows, %d provider effects, %d ledger entries", clicks, claimed.Load(), rows, effects, ledger)
	if rows <= 1 || effects <= 1 || ledger <= 1 {
		t.Fatalf("no duplicate: %d rows, %d effects, %d ledger entries; the control cannot show what the claim prevents", rows, effects, ledger)
	}
	if rows != clicks || effects != clicks || ledger != clicks {
		t.Errorf("%d rows, %d effects, %d ledger entries; with every click held in the window, want %d of each", rows, effects, ledger, clicks)
	}
}

// The provider did the work and the answer was lost. The naive worker retries at once with
// a fresh key, so the provider does the work again, and the ledger, appending an entry per
// attempt, bills the one transaction twice.
func TestNaive_LostAnswerIsPaidTwice(t *testing.T) {
	t.Parallel()
	e := setup(t)
	tx, ok := e.click(map[string]any{"action": "render", "candidate_id": e.draft, "render_inputs_version": e.version})
	if !ok {
		t.Fatal("the first click did not claim")
	}
	e.provider.DropAfterAccept(1)
	e.drain()

	log := e.provider.Log()
	ledger := e.count(`SELECT count(*) FROM cost_ledger WHERE transaction_id = '` + tx.ID + `'`)
	t.Logf("one render, one lost answer: %d provider effects, %d ledger entries for transaction %s", len(log), ledger, tx.ID)
	if len(log) != 2 || ledger != 2 {
		t.Fatalf("%d provider effects, %d ledger entries; want 2 and 2 (the retry paid again)", len(log), ledger)
	}
	if log[0].Key == log[1].Key {
		t.Errorf("both attempts sent key %q; the naive worker makes a new one per attempt", log[0].Key)
	}
}
