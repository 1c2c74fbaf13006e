package paidactions

import (
	"fmt"
	"net/http"
	"testing"

	"github.com/oncekit/once/examples/internal/storm"
)

// A storm of clicks (double clicks, second tabs, retries: 48 requests released together,
// three intentions among them) claims exactly three transactions, and once eight workers
// have run, the provider did three pieces of work and the ledger holds three entries.
func TestClaim_StormOfDuplicateClicksPaysOncePerIntention(t *testing.T) {
	t.Parallel()
	e := setup(t)
	job, draft := e.job("acme")
	v := e.inputs("acme", job, locked("voice-ana", "sku-kettle"))

	intentions := []map[string]any{
		{"action": "regenerate", "candidate_id": draft, "render_inputs_version": v, "instruction": "warmer light"},
		{"action": "regenerate", "candidate_id": draft, "render_inputs_version": v, "instruction": "slower pan"},
		{"action": "render", "candidate_id": draft, "render_inputs_version": v},
	}
	const perIntention = 16
	bodies := make([]map[string]any, len(intentions)*perIntention)
	for i := range bodies {
		bodies[i] = map[string]any{"clicked_at": fmt.Sprintf("2025-03-01T10:00:00.%03dZ", i), "tab": fmt.Sprint("tab-", i%3)}
		for k, v := range intentions[i%len(intentions)] {
			bodies[i][k] = v
		}
		if i%2 == 1 {
			// A client that pads the instruction is still asking the same thing.
			if s, ok := bodies[i]["instruction"].(string); ok {
				bodies[i]["instruction"] = "  " + s + " "
			}
		}
	}
	replies := storm.Collect(len(bodies), func(i int) claimReply { return e.click("acme", job, bodies[i]) })

	byIntention := map[int]map[string]int{}
	for i, r := range replies {
		if r.Code != http.StatusAccepted {
			t.Fatalf("click %d: %d %s", i, r.Code, r.Error)
		}
		n := i % len(intentions)
		ids := byIntention[n]
		if ids == nil {
			ids = map[string]int{}
			byIntention[n] = ids
		}
		ids[r.ID] += 0 // every transaction a click was given, claimed by it or not
		if !r.Duplicate {
			ids[r.ID]++
		}
	}
	for n, ids := range byIntention {
		if len(ids) != 1 {
			t.Errorf("intention %d: clicks got %d different transactions, want 1: %v", n, len(ids), ids)
		}
		for id, claimed := range ids {
			if claimed != 1 {
				t.Errorf("intention %d: %d clicks report claiming %s, want 1", n, claimed, id)
			}
		}
	}
	if got := e.count(`SELECT count(*) FROM paid_actions`); got != len(intentions) {
		t.Fatalf("paid_actions rows = %d, want %d", got, len(intentions))
	}
	if got := e.provider.Requests(); got != 0 {
		t.Fatalf("the provider saw %d requests before any worker ran: the claim spends nothing", got)
	}

	e.drain(8)

	if got := e.provider.Effects(); got != len(intentions) {
		t.Errorf("provider effects = %d, want %d", got, len(intentions))
	}
	if got := e.count(`SELECT count(*) FROM cost_ledger`); got != len(intentions) {
		t.Errorf("ledger entries = %d, want %d", got, len(intentions))
	}
	var want int64 = 2*Regenerate.Price() + Render.Price()
	var total int64
	if err := e.pool.QueryRow(e.ctx, `SELECT sum(amount_usd_micros) FROM cost_ledger`).Scan(&total); err != nil {
		t.Fatal(err)
	}
	if total != want {
		t.Errorf("ledger total = %d micro-dollars, want %d", total, want)
	}
	if got := e.count(`SELECT count(*) FROM candidates WHERE transaction_id IS NOT NULL`); got != len(intentions) {
		t.Errorf("result candidates = %d, want %d", got, len(intentions))
	}
	if got := e.count(`SELECT count(*) FROM paid_actions WHERE status = 'succeeded' AND provider_requests = 1`); got != len(intentions) {
		t.Errorf("succeeded with one provider request = %d, want %d", got, len(intentions))
	}

	// Clicks after the work is done get the settled transaction and its result, and spend
	// nothing.
	first := replies[0]
	again := e.click("acme", job, intentions[0])
	if again.Code != http.StatusOK || !again.Duplicate || again.ID != first.ID || again.Status != Succeeded || again.ResultCandidateID == 0 {
		t.Errorf("click after settlement = %+v, want 200, the duplicate of %s with its result", again, first.ID)
	}
	e.drain(2)
	if got := e.provider.Effects(); got != len(intentions) {
		t.Errorf("provider effects after a late click = %d, want %d", got, len(intentions))
	}
}

// The key is made of the stable parts of the click only: what the client sends besides
// (when, from which tab) does not change it, and each stable part does.
func TestActionKey_IsMadeOfTheStablePartsOnly(t *testing.T) {
	t.Parallel()
	base := PaidAction{JobID: 7, Action: Regenerate, CandidateID: 3, RenderInputsVersion: 2, Instruction: "warmer light"}
	key := func(a PaidAction) string {
		t.Helper()
		k, err := a.Key()
		if err != nil {
			t.Fatal(err)
		}
		return k
	}
	k := key(base)
	if len(k) != 64 {
		t.Fatalf("key %q: want 64 hex digits", k)
	}
	padded := base
	padded.Instruction = "  warmer light\n"
	if key(padded) != k {
		t.Error("surrounding space in the instruction changed the key")
	}
	changes := map[string]func(*PaidAction){
		"job":         func(a *PaidAction) { a.JobID = 8 },
		"action":      func(a *PaidAction) { a.Action = Render },
		"candidate":   func(a *PaidAction) { a.CandidateID = 4 },
		"version":     func(a *PaidAction) { a.RenderInputsVersion = 3 },
		"instruction": func(a *PaidAction) { a.Instruction = "cooler light" },
	}
	for part, change := range changes {
		a := base
		change(&a)
		if key(a) == k {
			t.Errorf("changing the %s kept the key: a new intention would be taken for a duplicate", part)
		}
	}
	// Pinned: it is the SHA-256 of the sorted-key JSON a browser can compute too, and a
	// change of encoding would make every stored key miss.
	const pinned = "e1e6b05f422ac3e2f7d88f7c5cf6be7fb892ea408929d58d19904cac7451ebce" // {"action":"render","candidate_id":1,"job_id":1,"render_inputs_version":1}
	if got := key(PaidAction{RenderInputsVersion: 1, CandidateID: 1, Action: Render, JobID: 1}); got != pinned {
		t.Errorf("key = %s, want %s", got, pinned)
	}
}

// Another account can neither claim an action on an account's job nor read its
// transaction: both answer 404, as if the job did not exist, and nothing is claimed.
func TestClaim_AccountsDoNotShareTransactions(t *testing.T) {
	t.Parallel()
	e := setup(t)
	jobA, draftA := e.job("acme")
	vA := e.inputs("acme", jobA, locked("voice-ana", "sku-kettle"))
	a := e.click("acme", jobA, map[string]any{"action": "render", "candidate_id": draftA, "render_inputs_version": vA})
	if a.Code != http.StatusAccepted {
		t.Fatalf("acme's click: %d %s", a.Code, a.Error)
	}
	// Another account naming acme's job is told it does not exist, and claims nothing.
	b := e.click("globex", jobA, map[string]any{"action": "render", "candidate_id": draftA, "render_inputs_version": vA})
	if b.Code != http.StatusNotFound {
		t.Errorf("globex clicking on acme's job: %d, want 404", b.Code)
	}
	if code := e.call(http.MethodGet, "globex", "/transactions/"+a.ID, nil, nil); code != http.StatusNotFound {
		t.Errorf("globex reading acme's transaction: %d, want 404", code)
	}
	if got := e.count(`SELECT count(*) FROM paid_actions`); got != 1 {
		t.Errorf("paid_actions rows = %d, want 1", got)
	}
}
