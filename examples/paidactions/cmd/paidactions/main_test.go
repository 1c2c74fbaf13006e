package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/oncekit/once/examples/internal/cmdtest"
	"github.com/oncekit/once/internal/pgtest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// The command migrates a fresh database, serves the API, and its worker carries out a
// double-clicked render once (against the fake provider it starts); cancelling it stops
// it cleanly.
func TestRun_ServesAndWorks(t *testing.T) {
	t.Parallel()
	db := pgtest.NewDatabase(t)
	cmd := cmdtest.Start(t, run, []string{"-addr", "127.0.0.1:0", "-work-every", "10ms"}, map[string]string{"DATABASE_URL": db.URL})
	base := cmd.URL

	call := func(method, path string, body any, out any) int {
		t.Helper()
		b, _ := json.Marshal(body)
		req, _ := http.NewRequestWithContext(t.Context(), method, base+path, bytes.NewReader(b))
		req.Header.Set("X-Account", "acme")
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if out != nil {
			if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
				t.Fatal(err)
			}
		}
		return resp.StatusCode
	}
	var job struct {
		JobID       int64 `json:"job_id"`
		CandidateID int64 `json:"candidate_id"`
	}
	if code := call("POST", "/jobs", map[string]string{"title": "spring ad"}, &job); code != http.StatusCreated {
		t.Fatalf("POST /jobs: %d", code)
	}
	inputs := map[string]any{"voice_model_id": "voice-ana", "product_identity_lock": map[string]any{"product_id": "sku-kettle"}}
	if code := call("POST", fmt.Sprintf("/jobs/%d/render-inputs", job.JobID), inputs, nil); code != http.StatusCreated {
		t.Fatalf("POST render-inputs: %d", code)
	}
	var first, second struct {
		ID string `json:"transaction_id"`
	}
	action := map[string]any{"action": "render", "candidate_id": job.CandidateID, "render_inputs_version": 1}
	call("POST", fmt.Sprintf("/jobs/%d/actions", job.JobID), action, &first)
	call("POST", fmt.Sprintf("/jobs/%d/actions", job.JobID), action, &second)
	if first.ID == "" || first.ID != second.ID {
		t.Fatalf("double click got transactions %q and %q, want one", first.ID, second.ID)
	}

	// The worker runs on its own clock: wait for the render to be settled.
	var tx struct {
		Status string `json:"status"`
	}
	deadline := time.Now().Add(30 * time.Second)
	for call("GET", "/transactions/"+first.ID, nil, &tx); tx.Status != "succeeded"; call("GET", "/transactions/"+first.ID, nil, &tx) {
		if time.Now().After(deadline) {
			t.Fatalf("the render is still %s after 30s", tx.Status)
		}
		time.Sleep(10 * time.Millisecond)
	}
	var ledger []map[string]any
	if call("GET", "/ledger", nil, &ledger); len(ledger) != 1 {
		t.Errorf("ledger = %v, want one entry", ledger)
	}

	if err := cmd.Stop(); err != nil {
		t.Errorf("run after cancel: %v", err)
	}
	if want := "the fake model API performed 1 effect: /v1/renders 1\n"; !strings.Contains(cmd.Log(), want) {
		t.Errorf("the command's log does not say %q:\n%s", want, cmd.Log())
	}
}

// Without DATABASE_URL the command says what is missing and starts nothing.
func TestRun_WithoutDatabaseURLSaysSo(t *testing.T) {
	t.Parallel()
	err := run(context.Background(), nil, func(string) string { return "" }, io.Discard)
	if err == nil || !strings.Contains(err.Error(), "DATABASE_URL is not set") {
		t.Fatalf("run without DATABASE_URL: %v", err)
	}
}
