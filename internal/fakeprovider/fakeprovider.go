// Package fakeprovider is a local HTTP server standing in for a paid API (a card charge, an
// email, a model call) in tests and demos. It counts effects, the lasting thing a duplicate
// costs, rather than requests.
//
// It honours the Idempotency-Key header as Stripe documents its own: the first request with
// a key performs the effect and its answer is saved; a later request with the same key and
// the same parameters (method, path and body) gets the saved answer again with
// "Idempotent-Replayed: true" and no new effect; the same key with other parameters is
// refused with 400; a request that arrives while the first with its key is still being
// performed is refused with 409. Requests without the header are each a new effect.
//
// It can be told to fail the way real providers fail:
//
//   - DropAfterAccept: perform the effect (and save its answer under the key), then drop the
//     connection without answering: the caller cannot tell whether anything happened.
//   - FailNext: refuse requests with a status before doing anything (an outage).
//   - WithoutIdempotency: a provider that ignores the header and cannot deduplicate.
//
// Every request answers JSON: an effect {"id": "eff_000001", "path": ..., "request": ...};
// an error {"error": {"type": ..., "message": ...}}.
package fakeprovider

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"
)

// Server is a running fake provider.
type Server struct {
	// URL is the server's base URL (http://127.0.0.1:port); post to any path under it.
	URL string

	srv        *httptest.Server
	dedupe     bool
	latency    time.Duration
	hold       <-chan struct{} // when set, every effect waits for it to close (tests of overlap)
	mu         sync.Mutex
	effects    []Effect
	requests   int
	replays    int
	keys       map[string]*keyRecord
	drops      int // effects still to perform and then drop
	fails      int // requests still to refuse before any effect
	failStatus int
}

// Effect is one effect the provider performed.
type Effect struct {
	// ID is the effect's id, as answered ("eff_000001").
	ID string
	// Path is the request's path ("/v1/charges").
	Path string
	// Key is the request's Idempotency-Key ("" for none).
	Key string
	// Body is the request's body.
	Body []byte
	// Dropped says the connection was dropped after the effect, before any answer.
	Dropped bool
}

// keyRecord is what the provider remembers of an idempotency key.
type keyRecord struct {
	params  string // method, path and body of the first request
	done    bool   // false while the first request is being performed
	status  int
	payload []byte
}

// Option configures a Server.
type Option func(*Server)

// WithoutIdempotency makes the provider ignore Idempotency-Key: every request is a new
// effect, as with an API that offers no deduplication.
func WithoutIdempotency() Option { return func(s *Server) { s.dedupe = false } }

// WithLatency makes every effect take d, so concurrent requests overlap the way they do with
// a real provider (and a concurrent request with the same key gets its 409).
func WithLatency(d time.Duration) Option { return func(s *Server) { s.latency = d } }

// New starts a fake provider on loopback and closes it when t ends.
func New(t testing.TB, opts ...Option) *Server {
	t.Helper()
	s := Start(opts...)
	t.Cleanup(s.Close)
	return s
}

// Start starts a fake provider on loopback, for a program rather than a test; Close stops it.
func Start(opts ...Option) *Server {
	s := &Server{dedupe: true, keys: map[string]*keyRecord{}}
	for _, o := range opts {
		o(s)
	}
	s.srv = httptest.NewServer(http.HandlerFunc(s.serve))
	s.URL = s.srv.URL
	return s
}

// Close stops the server, waiting for requests in progress.
func (s *Server) Close() { s.srv.Close() }

// Effects returns how many effects the provider performed.
func (s *Server) Effects() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.effects)
}

// EffectsAt returns how many effects requests to path performed.
func (s *Server) EffectsAt(path string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	n := 0
	for _, e := range s.effects {
		if e.Path == path {
			n++
		}
	}
	return n
}

// Log returns the effects performed so far, in order.
func (s *Server) Log() []Effect {
	s.mu.Lock()
	defer s.mu.Unlock()
	return append([]Effect(nil), s.effects...)
}

// Requests returns how many requests arrived, whatever became of them.
func (s *Server) Requests() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.requests
}

// Replays returns how many requests were answered with a saved answer.
func (s *Server) Replays() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.replays
}

// DropAfterAccept makes the next n effects happen and then drops each one's connection
// without an answer. With idempotency on, the effect's answer is saved under its key first,
// so a retry with the key gets it.
func (s *Server) DropAfterAccept(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.drops = n
}

// FailNext makes the next n requests fail with status (say 503) before anything happens;
// nothing is saved under their keys.
func (s *Server) FailNext(n, status int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.fails, s.failStatus = n, status
}

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	body, err := io.ReadAll(r.Body)
	s.mu.Lock()
	s.requests++
	switch {
	case err != nil:
		s.mu.Unlock()
		writeError(w, http.StatusBadRequest, "invalid_request_error", "reading the body: "+err.Error())
		return
	case r.Method != http.MethodPost:
		s.mu.Unlock()
		writeError(w, http.StatusMethodNotAllowed, "invalid_request_error", "only POST performs an effect")
		return
	case s.fails > 0:
		s.fails--
		status := s.failStatus
		s.mu.Unlock()
		writeError(w, status, "api_error", "the provider is failing on purpose")
		return
	}
	key := ""
	if s.dedupe {
		key = r.Header.Get("Idempotency-Key")
	}
	params := r.Method + " " + r.URL.Path + "\n" + string(body)
	var rec *keyRecord
	if key != "" {
		if old, ok := s.keys[key]; ok {
			// Read the record under the lock: the first request completes it under the
			// lock too, possibly while this one answers.
			first := *old
			if first.params == params && first.done {
				s.replays++
			}
			s.mu.Unlock()
			switch {
			case first.params != params:
				writeError(w, http.StatusBadRequest, "idempotency_error",
					fmt.Sprintf("idempotency key %q was first used with other parameters", key))
			case !first.done:
				writeError(w, http.StatusConflict, "idempotency_error",
					fmt.Sprintf("a request with idempotency key %q is still being performed", key))
			default:
				w.Header().Set("Idempotent-Replayed", "true")
				writeJSON(w, first.status, first.payload)
			}
			return
		}
		rec = &keyRecord{params: params}
		s.keys[key] = rec
	}
	s.mu.Unlock()

	if s.latency > 0 {
		time.Sleep(s.latency)
	}
	if s.hold != nil {
		<-s.hold
	}

	s.mu.Lock()
	e := Effect{ID: fmt.Sprintf("eff_%06d", len(s.effects)+1), Path: r.URL.Path, Key: key, Body: body}
	if s.drops > 0 {
		s.drops--
		e.Dropped = true
	}
	s.effects = append(s.effects, e)
	payload, _ := json.Marshal(map[string]any{"id": e.ID, "path": e.Path, "request": rawOrString(body)})
	if rec != nil {
		rec.done, rec.status, rec.payload = true, http.StatusOK, payload
	}
	s.mu.Unlock()

	if e.Dropped {
		drop(w)
		return
	}
	writeJSON(w, http.StatusOK, payload)
}

// drop closes the connection without writing a response: the client sees the connection
// end, after the effect happened.
func drop(w http.ResponseWriter) {
	conn, _, err := http.NewResponseController(w).Hijack()
	if err != nil {
		panic(http.ErrAbortHandler) // closes the connection without answering
	}
	conn.Close()
}

func rawOrString(body []byte) any {
	if json.Valid(body) {
		return json.RawMessage(body)
	}
	return string(body)
}

func writeJSON(w http.ResponseWriter, status int, payload []byte) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	w.Write(payload)
}

func writeError(w http.ResponseWriter, status int, kind, message string) {
	payload, _ := json.Marshal(map[string]any{"error": map[string]string{"type": kind, "message": message}})
	writeJSON(w, status, payload)
}

// Reply is the provider's answer to Post.
type Reply struct {
	// Status is the HTTP status.
	Status int
	// ID is the effect's id ("" when the answer is an error).
	ID string
	// Replayed says the answer was saved from an earlier request with the same key.
	Replayed bool
	// Body is the answer's body.
	Body []byte
}

// Post sends body (encoded as JSON) to path with key as its Idempotency-Key ("" for none),
// the way an application's provider client would. A dropped connection is an error; an
// error status is not (it is in Reply.Status).
func (s *Server) Post(ctx context.Context, path, key string, body any) (Reply, error) {
	return post(ctx, s.srv.Client(), s.URL, path, key, body)
}

// Post is Server.Post for a fake provider started by another process (a child process in
// a crash test), known by its base URL.
func Post(ctx context.Context, baseURL, path, key string, body any) (Reply, error) {
	return post(ctx, http.DefaultClient, baseURL, path, key, body)
}

func post(ctx context.Context, client *http.Client, baseURL, path, key string, body any) (Reply, error) {
	enc, err := json.Marshal(body)
	if err != nil {
		return Reply{}, fmt.Errorf("fakeprovider: encoding the body: %w", err)
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, strings.TrimSuffix(baseURL, "/")+"/"+strings.TrimPrefix(path, "/"), bytes.NewReader(enc))
	if err != nil {
		return Reply{}, fmt.Errorf("fakeprovider: %w", err)
	}
	// Without GetBody the request is not replayable, so net/http's Transport does not resend
	// it by itself when a kept-alive connection drops before the answer (it does so for a
	// POST that carries Idempotency-Key): the caller, not the transport, decides on retries.
	req.GetBody = nil
	req.Header.Set("Content-Type", "application/json")
	if key != "" {
		req.Header.Set("Idempotency-Key", key)
	}
	resp, err := client.Do(req)
	if err != nil {
		return Reply{}, fmt.Errorf("fakeprovider: POST %s: %w", path, err)
	}
	defer resp.Body.Close()
	payload, err := io.ReadAll(resp.Body)
	if err != nil {
		return Reply{}, fmt.Errorf("fakeprovider: POST %s: reading the answer: %w", path, err)
	}
	reply := Reply{Status: resp.StatusCode, Replayed: resp.Header.Get("Idempotent-Replayed") == "true", Body: payload}
	var effect struct{ ID string }
	if resp.StatusCode == http.StatusOK && json.Unmarshal(payload, &effect) == nil {
		reply.ID = effect.ID
	}
	return reply, nil
}
