package paidactions

import (
	"errors"
	"net/http"
	"slices"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgconn"

	"github.com/oncekit/once/examples/internal/storm"
)

// A click whose render inputs lost the voice or the product lock is refused before any
// spend, with an error that says which lock is missing, and writes nothing.
func TestClaim_MissingLockIsRefusedBeforeAnySpend(t *testing.T) {
	t.Parallel()
	e := setup(t)
	job, draft := e.job("acme")
	noProduct := e.inputs("acme", job, RenderInputs{VoiceModelID: "voice-ana", Prompt: PromptContract{Instruction: "draft"}})
	noVoice := e.inputs("acme", job, RenderInputs{ProductLock: &ProductLock{ProductID: "sku-kettle"}})

	for _, c := range []struct {
		name    string
		version int
		want    string
	}{
		{"no product lock", noProduct, "cannot render job " + itoa(job) + " with render inputs v1: no product identity lock"},
		{"no voice", noVoice, "cannot render job " + itoa(job) + " with render inputs v2: no locked voice model"},
		{"no such version", 9, "job " + itoa(job) + ": no such render inputs v9"},
	} {
		r := e.click("acme", job, map[string]any{"action": "render", "candidate_id": draft, "render_inputs_version": c.version})
		if r.Code != http.StatusUnprocessableEntity || r.Error != c.want {
			t.Errorf("%s: %d %q, want 422 %q", c.name, r.Code, r.Error, c.want)
		}
	}
	if got := e.count(`SELECT count(*) FROM paid_actions`); got != 0 {
		t.Errorf("paid_actions rows = %d, want 0", got)
	}
	if got := e.provider.Requests(); got != 0 {
		t.Errorf("provider requests = %d, want 0", got)
	}
}

// An action already queued whose snapshot has no product lock (queued by a release that
// did not check) fails when the worker resumes it, with the same clear error, and spends
// nothing.
func TestWorker_MissingLockOnResumeFailsWithoutSpending(t *testing.T) {
	t.Parallel()
	e := setup(t)
	job, draft := e.job("acme")
	v := e.inputs("acme", job, RenderInputs{VoiceModelID: "voice-ana"})
	a := PaidAction{JobID: job, Action: Render, CandidateID: draft, RenderInputsVersion: v}
	key, err := a.Key()
	if err != nil {
		t.Fatal(err)
	}
	var id string
	if err := e.pool.QueryRow(e.ctx, `INSERT INTO paid_actions (account_id, action_key, job_id, action, candidate_id, inputs_version)
VALUES ('acme', $1, $2, 'render', $3, $4) RETURNING transaction_id::text`, key, job, draft, v).Scan(&id); err != nil {
		t.Fatal(err)
	}

	if did, err := e.worker.Step(e.ctx); !did || err != nil {
		t.Fatalf("Step = %v, %v", did, err)
	}
	got := e.transaction("acme", id)
	want := "cannot render job " + itoa(job) + " with render inputs v1: no product identity lock"
	if got.Status != Failed || got.Error != want {
		t.Errorf("resumed action: %s %q, want failed %q", got.Status, got.Error, want)
	}
	if e.provider.Requests() != 0 || e.count(`SELECT count(*) FROM cost_ledger`) != 0 {
		t.Errorf("%d provider requests, %d ledger entries; want 0, 0", e.provider.Requests(), e.count(`SELECT count(*) FROM cost_ledger`))
	}
}

// Concurrent saves of one job's render inputs take turns on the job's transaction lock:
// each gets its own version, none fails.
func TestSaveRenderInputs_ConcurrentSavesEachGetAVersion(t *testing.T) {
	t.Parallel()
	e := setup(t)
	job, _ := e.job("acme")
	const saves = 32
	versions := storm.Collect(saves, func(int) int {
		v, _, err := SaveRenderInputsOnce(e.ctx, e.pool, job, locked("voice-ana", "sku-kettle"))
		if err != nil {
			t.Error(err)
		}
		return v
	})
	slices.Sort(versions)
	for i, v := range versions {
		if v != i+1 {
			t.Fatalf("versions = %v, want 1 to %d", versions, saves)
		}
	}
}

// The same decision without the lock, in two transactions that overlap, picks the same
// version twice, and the second save fails: the lock is what makes the read safe.
func TestSaveRenderInputs_WithoutTheLockOverlappingSavesCollide(t *testing.T) {
	t.Parallel()
	e := setup(t)
	job, _ := e.job("acme")
	save := func(guarded bool) (first, second int, secondErr error) {
		t.Helper()
		tx1, err := e.pool.Begin(e.ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer tx1.Rollback(e.ctx)
		tx2, err := e.pool.Begin(e.ctx)
		if err != nil {
			t.Fatal(err)
		}
		defer tx2.Rollback(e.ctx)
		if guarded {
			first, _, err = SaveRenderInputsOnce(e.ctx, tx1, job, locked("voice-ana", "sku-kettle"))
		} else {
			first, err = SaveRenderInputs(e.ctx, tx1, job, locked("voice-ana", "sku-kettle"))
		}
		if err != nil {
			t.Fatal(err)
		}
		// The second save reads while the first is uncommitted, then waits (on the lock, or
		// on the first's row) until the first commits.
		done := make(chan struct{})
		go func() {
			defer close(done)
			if guarded {
				second, _, secondErr = SaveRenderInputsOnce(e.ctx, tx2, job, locked("voice-bo", "sku-kettle"))
			} else {
				second, secondErr = SaveRenderInputs(e.ctx, tx2, job, locked("voice-bo", "sku-kettle"))
			}
			if secondErr == nil {
				secondErr = tx2.Commit(e.ctx)
			}
		}()
		waitForLockWait(t, e, done)
		if err := tx1.Commit(e.ctx); err != nil {
			t.Fatal(err)
		}
		<-done
		return first, second, secondErr
	}

	first, second, err := save(false)
	var pgErr *pgconn.PgError
	if first != 1 || !errors.As(err, &pgErr) || pgErr.Code != "23505" {
		t.Errorf("unguarded overlapping saves: v%d then v%d, %v; want the second to collide on version 1 (23505)", first, second, err)
	}
	first, second, err = save(true)
	if err != nil || second != first+1 {
		t.Errorf("guarded overlapping saves: v%d then v%d, %v; want consecutive versions", first, second, err)
	}
}

// waitForLockWait returns once some session of the test's database waits on a lock: the
// second save has read and is blocked behind the first. It fails t if the second save
// returns (closes done) without waiting.
func waitForLockWait(t *testing.T, e *env, done <-chan struct{}) {
	t.Helper()
	for {
		var waiting bool
		if err := e.pool.QueryRow(e.ctx, `SELECT EXISTS (SELECT 1 FROM pg_stat_activity
WHERE datname = current_database() AND wait_event_type = 'Lock')`).Scan(&waiting); err != nil {
			t.Fatal(err)
		}
		if waiting {
			return
		}
		select {
		case <-done:
			t.Fatal("the second save returned without waiting behind the first")
		case <-e.ctx.Done():
			t.Fatal(e.ctx.Err())
		case <-time.After(2 * time.Millisecond):
		}
	}
}

// Bad requests are refused with a clear error and write nothing.
func TestServer_BadRequestsAreRefusedAndWriteNothing(t *testing.T) {
	t.Parallel()
	e := setup(t)
	job, draft := e.job("acme")
	v := e.inputs("acme", job, locked("voice-ana", "sku-kettle"))
	path := "/jobs/" + itoa(job) + "/actions"
	for _, c := range []struct {
		name    string
		account string
		path    string
		body    any
		code    int
		want    string
	}{
		{"no account", "", path, map[string]any{"action": "render", "candidate_id": draft, "render_inputs_version": v}, 401, "missing X-Account header"},
		{"unknown action", "acme", path, map[string]any{"action": "upscale", "candidate_id": draft, "render_inputs_version": v}, 400, `bad paid action: unknown action "upscale" (regenerate, promote or render)`},
		{"no candidate", "acme", path, map[string]any{"action": "regenerate", "render_inputs_version": v}, 400, "bad paid action: regenerate needs candidate_id"},
		{"no version", "acme", path, map[string]any{"action": "render", "candidate_id": draft}, 400, "bad paid action: render needs render_inputs_version, the snapshot of voice and product lock it uses"},
		{"promote with instruction", "acme", path, map[string]any{"action": "promote", "candidate_id": draft, "render_inputs_version": v, "instruction": "x"}, 400, "bad paid action: promote takes no instruction (it upscales the candidate as it is)"},
		{"unknown field", "acme", path, map[string]any{"action": "render", "candidate_id": draft, "render_inputs_version": v, "price": 0}, 400, `reading the request body: json: unknown field "price"`},
		{"other job in body", "acme", path, map[string]any{"job_id": job + 1, "action": "render", "candidate_id": draft, "render_inputs_version": v}, 400, "job_id " + itoa(job+1) + " in the body is not the job " + itoa(job) + " of the path"},
		{"bad job id", "acme", "/jobs/abc/actions", map[string]any{"action": "render"}, 400, `job "abc" is not a job id`},
		{"another account's job", "globex", path, map[string]any{"action": "render", "candidate_id": draft, "render_inputs_version": v}, 404, "job " + itoa(job) + " with candidate " + itoa(draft) + ": not found"},
		{"candidate of another job", "acme", path, map[string]any{"action": "render", "candidate_id": draft + 1000, "render_inputs_version": v}, 404, "job " + itoa(job) + " with candidate " + itoa(draft+1000) + ": not found"},
		{"lock without product", "acme", "/jobs/" + itoa(job) + "/render-inputs", map[string]any{"voice_model_id": "v", "product_identity_lock": map[string]any{"product_id": " "}}, 400, "product_identity_lock needs product_id (omit the lock for a draft without one)"},
	} {
		var out struct {
			Error string `json:"error"`
		}
		code := e.call(http.MethodPost, c.account, c.path, c.body, &out)
		if code != c.code || out.Error != c.want {
			t.Errorf("%s: %d %q, want %d %q", c.name, code, out.Error, c.code, c.want)
		}
	}
	if got := e.count(`SELECT count(*) FROM paid_actions`); got != 0 {
		t.Errorf("paid_actions rows = %d, want 0", got)
	}
	if got := e.count(`SELECT count(*) FROM render_inputs`); got != 1 {
		t.Errorf("render_inputs rows = %d, want 1", got)
	}
	if got := e.provider.Requests(); got != 0 {
		t.Errorf("provider requests = %d, want 0", got)
	}
}
