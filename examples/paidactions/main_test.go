package paidactions

import (
	"bytes"
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/oncekit/once/examples/internal/migrated"
	"github.com/oncekit/once/examples/internal/storm"
	"github.com/oncekit/once/internal/fakeprovider"
	"github.com/oncekit/once/internal/pgtest"
)

func TestMain(m *testing.M) { os.Exit(pgtest.Main(m)) }

// env is one test's editor: a copy of the migrated database, a fake model
// provider on loopback, the HTTP API on loopback, and a worker the test drives step by step.
type env struct {
	t        *testing.T
	ctx      context.Context
	pool     *pgxpool.Pool
	provider *fakeprovider.Server
	api      *httptest.Server
	worker   *Worker
}

// migratedDB is the editor's database as every test starts from it: migrated, empty.
var migratedDB = migrated.Database("paidactions", Migrate)

func setup(t *testing.T) *env {
	t.Helper()
	ctx := t.Context()
	pool := migratedDB.New(t)
	provider := fakeprovider.New(t)
	api := httptest.NewServer(NewServer(pool))
	t.Cleanup(api.Close)
	// A transport of its own, so no connection is shared with another test's provider.
	transport := &http.Transport{}
	t.Cleanup(transport.CloseIdleConnections)
	worker := &Worker{DB: pool, Provider: &Client{BaseURL: provider.URL, HTTP: &http.Client{Transport: transport, Timeout: 30 * time.Second}}}
	return &env{t: t, ctx: ctx, pool: pool, provider: provider, api: api, worker: worker}
}

// job creates a job for account and returns it with its starter candidate.
func (e *env) job(account string) (job, candidate int64) {
	e.t.Helper()
	var out struct {
		JobID       int64 `json:"job_id"`
		CandidateID int64 `json:"candidate_id"`
	}
	if code := e.call(http.MethodPost, account, "/jobs", map[string]string{"title": "spring ad"}, &out); code != http.StatusCreated {
		e.t.Fatalf("creating a job: %d", code)
	}
	return out.JobID, out.CandidateID
}

// inputs saves render inputs for the job through the API and returns their version.
func (e *env) inputs(account string, job int64, in RenderInputs) int {
	e.t.Helper()
	var out struct {
		Version int `json:"version"`
	}
	if code := e.call(http.MethodPost, account, "/jobs/"+itoa(job)+"/render-inputs", in, &out); code != http.StatusCreated {
		e.t.Fatalf("saving render inputs: %d", code)
	}
	return out.Version
}

// claimReply is the API's answer to a paid-action click.
type claimReply struct {
	Code int
	Transaction
	Duplicate bool   `json:"duplicate"`
	Error     string `json:"error"`
}

// click posts a paid action for the job, as the editor's button does.
func (e *env) click(account string, job int64, body any) claimReply {
	var r claimReply
	r.Code = e.call(http.MethodPost, account, "/jobs/"+itoa(job)+"/actions", body, &r)
	return r
}

// call sends a JSON request to the API and decodes the answer into out.
func (e *env) call(method, account, path string, body, out any) int {
	var buf bytes.Buffer
	if body != nil {
		if err := json.NewEncoder(&buf).Encode(body); err != nil {
			e.t.Error(err)
			return 0
		}
	}
	req, err := http.NewRequestWithContext(e.ctx, method, e.api.URL+path, &buf)
	if err != nil {
		e.t.Error(err)
		return 0
	}
	if account != "" {
		req.Header.Set(AccountHeader, account)
	}
	resp, err := e.api.Client().Do(req)
	if err != nil {
		e.t.Error(err)
		return 0
	}
	defer resp.Body.Close()
	if out != nil {
		if err := json.NewDecoder(resp.Body).Decode(out); err != nil {
			e.t.Errorf("%s %s: decoding the answer: %v", method, path, err)
		}
	}
	return resp.StatusCode
}

// count runs a SELECT count(*) ... and returns the number.
func (e *env) count(sql string, args ...any) int {
	e.t.Helper()
	var n int
	if err := e.pool.QueryRow(e.ctx, sql, args...).Scan(&n); err != nil {
		e.t.Fatalf("%s: %v", sql, err)
	}
	return n
}

// drain runs workers concurrently, each stepping until no queued action is left.
func (e *env) drain(workers int) {
	e.t.Helper()
	storm.Run(workers, func(int) {
		for {
			did, err := e.worker.Step(e.ctx)
			if err != nil {
				e.t.Error(err)
				return
			}
			if !did {
				return
			}
		}
	})
}

// transaction reads a transaction as its account sees it.
func (e *env) transaction(account, id string) Transaction {
	e.t.Helper()
	t, err := LookupTransaction(e.ctx, e.pool, account, id)
	if err != nil {
		e.t.Fatal(err)
	}
	return t
}

// locked is complete render inputs: a voice and a product identity lock.
func locked(voice, product string) RenderInputs {
	return RenderInputs{
		VoiceModelID: voice,
		ProductLock:  &ProductLock{ProductID: product, ReferenceImageIDs: []string{product + "-front", product + "-side"}},
		Prompt:       PromptContract{Instruction: "sunlit kitchen, 15 seconds", NegativePrompt: "no text overlays"},
	}
}

func itoa(n int64) string { return strconv.FormatInt(n, 10) }
