package paidactions

import (
	"encoding/json"
	"fmt"
	"net/http"
	"testing"

	once "github.com/oncekit/once/runtime"

	"github.com/oncekit/once/examples/internal/storm"
)

// claimOne claims a render of a fresh job for acme and returns its transaction.
func (e *env) claimOne() Transaction {
	e.t.Helper()
	job, draft := e.job("acme")
	v := e.inputs("acme", job, locked("voice-ana", "sku-kettle"))
	r := e.click("acme", job, map[string]any{"action": "render", "candidate_id": draft, "render_inputs_version": v})
	if r.Code != http.StatusAccepted {
		e.t.Fatalf("click: %d %s", r.Code, r.Error)
	}
	return r.Transaction
}

// The provider did the work but the answer was lost on the way back. The worker records
// the outcome as unknown and does not retry it as new work; the recovery job asks again
// with the same key, gets the late result, and attaches it to the same transaction: one
// piece of work at the provider, one ledger entry, one surfaced result.
func TestRecovery_LateResultIsAttachedToTheSameTransaction(t *testing.T) {
	t.Parallel()
	e := setup(t)
	tx := e.claimOne()

	e.provider.DropAfterAccept(1)
	if did, err := e.worker.Step(e.ctx); !did || err != nil {
		t.Fatalf("Step = %v, %v; want true, nil", did, err)
	}
	if got := e.transaction("acme", tx.ID); got.Status != Unknown {
		t.Fatalf("after the lost answer: status %s, want unknown", got.Status)
	}
	if e.provider.Effects() != 1 || e.count(`SELECT count(*) FROM cost_ledger`) != 0 || e.count(`SELECT count(*) FROM candidates WHERE transaction_id IS NOT NULL`) != 0 {
		t.Fatalf("after the lost answer: %d effects, %d ledger entries, %d results; want 1, 0, 0",
			e.provider.Effects(), e.count(`SELECT count(*) FROM cost_ledger`), e.count(`SELECT count(*) FROM candidates WHERE transaction_id IS NOT NULL`))
	}
	if did, err := e.worker.Step(e.ctx); did || err != nil {
		t.Fatalf("second Step = %v, %v: an unknown outcome must not be queued again as new work", did, err)
	}

	if did, err := e.worker.Recover(e.ctx); !did || err != nil {
		t.Fatalf("Recover = %v, %v; want true, nil", did, err)
	}
	late := e.provider.Log()[0]
	got := e.transaction("acme", tx.ID)
	if got.Status != Succeeded || got.ProviderJobID != late.ID || got.ProviderRequests != 2 {
		t.Errorf("after recovery: %+v, want succeeded with the late result %s after 2 provider requests", got, late.ID)
	}
	if e.provider.Effects() != 1 || e.provider.Replays() != 1 {
		t.Errorf("provider: %d effects, %d replays; want 1, 1", e.provider.Effects(), e.provider.Replays())
	}
	if want := once.ProviderKey("paidaction", tx.ID); late.Key != want {
		t.Errorf("provider key %q, want %q (derived from the transaction)", late.Key, want)
	}
	ledger, err := Ledger(e.ctx, e.pool, "acme")
	if err != nil {
		t.Fatal(err)
	}
	if len(ledger) != 1 || ledger[0].TransactionID != tx.ID || ledger[0].ProviderJobID != late.ID || ledger[0].AmountUSDMicros != Render.Price() || ledger[0].ProviderRequests != 2 {
		t.Errorf("ledger = %+v, want one entry of %d for %s, provider job %s, 2 requests", ledger, Render.Price(), tx.ID, late.ID)
	}
	if n := e.count(`SELECT count(*) FROM candidates WHERE transaction_id = $1 AND provider_job_id = $2`, tx.ID, late.ID); n != 1 {
		t.Errorf("result candidates of %s = %d, want 1", tx.ID, n)
	}
	if did, err := e.worker.Recover(e.ctx); did || err != nil {
		t.Errorf("Recover after settlement = %v, %v; want nothing to do", did, err)
	}
}

// A worker that died after sending its request leaves the action dispatching. The
// recovery job leaves it alone while it may still be alive, then, once it is stale, asks
// the provider again with the same key: the work the dead worker paid for is attached, and
// not paid for twice.
func TestRecovery_DeadWorkersActionIsAttachedNotRepeated(t *testing.T) {
	t.Parallel()
	e := setup(t)
	tx := e.claimOne()

	// The dead worker: it took the action and sent its request, then nothing more.
	taken, err := e.worker.take(e.ctx, `status = 'queued'`)
	if err != nil {
		t.Fatal(err)
	}
	req, err := e.worker.request(e.ctx, taken)
	if err != nil {
		t.Fatal(err)
	}
	if _, _, err := e.worker.Provider.DispatchOnce(e.ctx, req); err != nil {
		t.Fatal(err)
	}

	if did, err := e.worker.Recover(e.ctx); did || err != nil {
		t.Fatalf("Recover while the worker may be alive = %v, %v; want nothing to do", did, err)
	}
	if _, err := e.pool.Exec(e.ctx, `UPDATE paid_actions SET dispatched_at = now() - interval '10 minutes' WHERE transaction_id = $1`, tx.ID); err != nil {
		t.Fatal(err)
	}
	if did, err := e.worker.Recover(e.ctx); !did || err != nil {
		t.Fatalf("Recover of the stale action = %v, %v; want true, nil", did, err)
	}
	if got := e.transaction("acme", tx.ID); got.Status != Succeeded || got.ProviderJobID != e.provider.Log()[0].ID {
		t.Errorf("after recovery: %+v, want succeeded with the dead worker's result", got)
	}
	if e.provider.Effects() != 1 || e.provider.Replays() != 1 || e.count(`SELECT count(*) FROM cost_ledger`) != 1 {
		t.Errorf("%d effects, %d replays, %d ledger entries; want 1, 1, 1", e.provider.Effects(), e.provider.Replays(), e.count(`SELECT count(*) FROM cost_ledger`))
	}
}

// Many actions, many workers and recovery jobs running at once, and a provider that loses
// a third of its answers: every action ends succeeded, each billed once, each with one
// result.
func TestWorkers_ConcurrentWorkersAndRecoveryBillEachActionOnce(t *testing.T) {
	t.Parallel()
	e := setup(t)
	job, draft := e.job("acme")
	v := e.inputs("acme", job, locked("voice-ana", "sku-kettle"))
	const actions = 24
	for i := range actions {
		r := e.click("acme", job, map[string]any{"action": "regenerate", "candidate_id": draft, "render_inputs_version": v, "instruction": fmt.Sprint("take ", i)})
		if r.Code != http.StatusAccepted {
			t.Fatalf("click %d: %d %s", i, r.Code, r.Error)
		}
	}
	e.provider.DropAfterAccept(actions / 3)

	storm.Run(8, func(int) {
		for {
			stepped, err := e.worker.Step(e.ctx)
			if err != nil {
				t.Error(err)
				return
			}
			recovered, err := e.worker.Recover(e.ctx)
			if err != nil {
				t.Error(err)
				return
			}
			if !stepped && !recovered {
				return
			}
		}
	})
	// A worker may have recorded a lost answer after the others stopped looking.
	for {
		did, err := e.worker.Recover(e.ctx)
		if err != nil {
			t.Fatal(err)
		}
		if !did {
			break
		}
	}

	if got := e.count(`SELECT count(*) FROM paid_actions WHERE status = 'succeeded'`); got != actions {
		t.Errorf("succeeded actions = %d, want %d", got, actions)
	}
	if got := e.provider.Effects(); got != actions {
		t.Errorf("provider effects = %d, want %d", got, actions)
	}
	if got := e.provider.Replays(); got != actions/3 {
		t.Errorf("provider replays = %d, want %d (one per lost answer)", got, actions/3)
	}
	if got := e.count(`SELECT count(*) FROM cost_ledger`); got != actions {
		t.Errorf("ledger entries = %d, want %d", got, actions)
	}
	if got := e.count(`SELECT count(DISTINCT transaction_id) FROM candidates WHERE transaction_id IS NOT NULL`); got != actions {
		t.Errorf("transactions with a result = %d, want %d", got, actions)
	}
	if got := e.count(`SELECT count(*) FROM candidates WHERE transaction_id IS NOT NULL`); got != actions {
		t.Errorf("result candidates = %d, want %d", got, actions)
	}
}

// A provider outage (503, nothing done) sends the action back to the queue; the next try
// uses the same key, and the action is billed once.
func TestWorker_ProviderOutageRequeuesWithTheSameKey(t *testing.T) {
	t.Parallel()
	e := setup(t)
	tx := e.claimOne()
	e.provider.FailNext(1, http.StatusServiceUnavailable)
	if did, err := e.worker.Step(e.ctx); !did || err != nil {
		t.Fatalf("Step = %v, %v", did, err)
	}
	if got := e.transaction("acme", tx.ID); got.Status != Queued {
		t.Fatalf("after a 503: status %s, want queued", got.Status)
	}
	e.drain(1)
	got := e.transaction("acme", tx.ID)
	if got.Status != Succeeded || got.ProviderRequests != 2 {
		t.Errorf("after the outage: %+v, want succeeded after 2 requests", got)
	}
	if e.provider.Effects() != 1 || e.count(`SELECT count(*) FROM cost_ledger`) != 1 {
		t.Errorf("%d effects, %d ledger entries; want 1, 1", e.provider.Effects(), e.count(`SELECT count(*) FROM cost_ledger`))
	}
}

// A resume renders with the snapshot the action was claimed with, even after the user
// saved other inputs: the voice and product lock of the click reach the provider.
func TestResume_HydratesTheSnapshotTheActionWasClaimedWith(t *testing.T) {
	t.Parallel()
	e := setup(t)
	job, draft := e.job("acme")
	v1 := e.inputs("acme", job, locked("voice-ana", "sku-kettle"))
	r := e.click("acme", job, map[string]any{"action": "render", "candidate_id": draft, "render_inputs_version": v1})
	if r.Code != http.StatusAccepted {
		t.Fatalf("click: %d %s", r.Code, r.Error)
	}
	// The user moves on before the worker gets to the render.
	if v2 := e.inputs("acme", job, locked("voice-bo", "sku-toaster")); v2 != v1+1 {
		t.Fatalf("second save got version %d, want %d", v2, v1+1)
	}
	e.drain(1)

	log := e.provider.Log()
	if len(log) != 1 {
		t.Fatalf("provider effects = %d, want 1", len(log))
	}
	var sent DispatchRequest
	if err := json.Unmarshal(log[0].Body, &sent); err != nil {
		t.Fatal(err)
	}
	in := sent.Inputs
	if sent.InputsVersion != v1 || in.VoiceModelID != "voice-ana" || in.ProductLock == nil || in.ProductLock.ProductID != "sku-kettle" ||
		len(in.ProductLock.ReferenceImageIDs) != 2 || in.ProductLock.LockedAt.IsZero() {
		t.Errorf("provider was asked for %+v with %+v; want v%d, voice-ana, sku-kettle locked", sent, in.ProductLock, v1)
	}
}
