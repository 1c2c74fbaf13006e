// Package oncehttp is net/http middleware for the Idempotency-Key request header: the front
// door of a paid product, where a second click, a second tab, a reconnecting phone or an
// integration's retry must not make the work happen twice.
//
// Each request that carries a key is an operation of once's runtime (a once.Forever guard,
// over once.operations), its key the Idempotency-Key, scoped to the account the
// application's Account function authenticates, never to anything in the request body. It is
// stored as once.Forever says a front door's reference is, Ref{Scope: once.MustKey(account),
// Key: once.MustKey(key)}, so a status endpoint can find it with onceops.Lookup, a generated
// wrapper with scope=account key=reference meets the same row, and the ledger entries its
// handler records carry the same scope as any other guard's for that account. The handler
// runs at most once per account and key:
//
//   - the first request runs the handler; its response (status, chosen headers, body) is
//     recorded and sent;
//   - a retry gets the recorded response again, marked "Idempotent-Replayed: true";
//   - a request while the first is still running gets 409 (or, with Config.Wait, waits
//     for the first to finish and gets its response);
//   - the key reused with a different request (method, target, media type or body; a JSON
//     body is compared by value, so key order and number spelling do not matter) gets 422;
//   - a request that needs a key and has none gets 400, as does a malformed key.
//
// Errors are application/problem+json (RFC 9457) with a type per case (see the Problem
// constants). Only unsafe methods (POST, PUT, PATCH, DELETE) are handled by default; others
// pass through untouched.
//
// What the handler's response means for a retry:
//
//   - 2xx, 3xx and the other 4xx (a declined payment, 402; a conflict with the resource's
//     state, 409) are recorded and replayed: the request was carried out, or refused on a
//     decision about the state it found, and asking again must get the same answer;
//   - a refusal of the request itself, before anything was done, is not recorded: by
//     default 400, 401, 403, 404, 405, 413, 415 and 422 (DefaultUnrecorded; see
//     Config.Unrecorded), or any response whose handler called DontRecord. The key is left
//     as if it had never been used, so the client can correct the request and send it again
//     with the same key, as Stripe documents for a request that failed validation. Recorded,
//     such an answer would hold the client's mistake against it for the retention window:
//     replayed to the same request, and the corrected one refused as a reused key (422);
//   - 5xx, 408, 425 and 429 release the key: the work did not happen, or will be done again
//     safely, so a retry of the same request runs the handler again (the key keeps its
//     request: a different one is refused with 422, as the first may have done part of the
//     work);
//   - a handler that cannot know whether its effect happened (a provider took the request
//     and the connection failed) calls once.AttemptFrom(r.Context()).Uncertain(err): the
//     operation is recorded uncertain and later requests get 409 until an operator resolves
//     it (onceops.ListUncertain).
//
// A response not recorded must mean nothing was done: the handler answers 4xx before its
// first effect. A key whose earlier attempt may have done work (a released key's retry, or
// an attempt that recorded a checkpoint) is released rather than forgotten, whatever the
// status (see once.Rejected).
//
// The handler finds the operation in its request's context (once.AttemptFrom): its provider
// keys (Attempt.ProviderKey), ledger entries (Attempt.Record), follow-ups (Attempt.FollowUp)
// and checkpoints (once.Step) are the runtime's.
//
// The response is buffered until the outcome is recorded, so a client that got an answer
// and asks again finds it recorded. The middleware is for answers, not streams.
//
// Keys are kept for Config.Retain (a day by default); a retry after that runs as new work.
// Retries come from net/http itself too: a Go client's Transport resends a request that
// carries an Idempotency-Key when its kept-alive connection breaks before the answer (see
// the runtime's package doc); the middleware answers such a resend as any other retry.
// The IETF draft "The Idempotency-Key HTTP Header Field" and Stripe's idempotent requests
// describe the protocol.
package oncehttp

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"mime"
	"net/http"
	"strings"
	"sync/atomic"
	"time"

	once "github.com/oncekit/once/runtime"
)

// Defaults for a zero Config field.
const (
	// DefaultName is the operation name of a Config without one.
	DefaultName = "http"
	// DefaultRetain is how long a key is remembered when Config.Retain is zero: a day, the
	// window in which clients retry (Stripe keeps its keys as long).
	DefaultRetain = 24 * time.Hour
	// DefaultMaxBody is the largest request body read when Config.MaxBody is zero.
	DefaultMaxBody = 1 << 20
	// DefaultMaxResponse is the largest response body recorded when Config.MaxResponse is
	// zero.
	DefaultMaxResponse = 1 << 20
)

// DefaultReplayHeaders are the response headers recorded and replayed when
// Config.ReplayHeaders is nil.
var DefaultReplayHeaders = []string{"Content-Type", "Content-Language", "Content-Location", "Location", "Link"}

// DefaultUnrecorded are the statuses not recorded when Config.Unrecorded is nil: the
// answers that refuse the request as it was sent, before anything is done (see the package
// doc). 400 Bad Request, 401 Unauthorized, 403 Forbidden, 404 Not Found, 405 Method Not
// Allowed, 413 Content Too Large, 415 Unsupported Media Type, 422 Unprocessable Content.
var DefaultUnrecorded = []int{
	http.StatusBadRequest, http.StatusUnauthorized, http.StatusForbidden, http.StatusNotFound,
	http.StatusMethodNotAllowed, http.StatusRequestEntityTooLarge, http.StatusUnsupportedMediaType,
	http.StatusUnprocessableEntity,
}

// Config configures the middleware. DB and Account are required.
type Config struct {
	// DB holds once's tables (see onceschema.Migrate).
	DB once.DB
	// Account returns the authenticated account (user, workspace, API key owner) the
	// request acts for. Keys are scoped to it: the same key from two accounts is two
	// operations, and neither sees the other's response. An error or an empty account is
	// answered 401.
	Account func(*http.Request) (string, error)
	// Name names the operation in once.operations; zero means DefaultName. Keys are per
	// Name and account, so middleware instances with different names keep separate keys.
	// New refuses a name the runtime would refuse (see once.CheckName).
	Name string
	// Required answers 400 to a request with a handled method and no Idempotency-Key;
	// otherwise such a request passes through unprotected.
	Required bool
	// Methods are the methods handled; nil means POST, PUT, PATCH and DELETE.
	Methods []string
	// Retain is how long a key is remembered; zero means DefaultRetain (a day).
	Retain time.Duration
	// Stale is how long a request's key may show no life before it is taken to be held by
	// a dead process; zero means once.Forever's default (45 s on a *pgxpool.Pool, whose
	// heartbeat shows a long handler's life; 20 minutes otherwise).
	Stale time.Duration
	// RepeatSafe says the handler's effects may be repeated after a process died mid-request
	// (they carry provider keys, or are checkpointed); see once.Forever.
	RepeatSafe bool
	// NoHeartbeat turns off the heartbeat that keeps a long request's key from being taken
	// for a dead process's while the handler runs, when DB is a *pgxpool.Pool; see
	// once.Forever.
	NoHeartbeat bool
	// Unrecorded are the 4xx statuses whose responses are not recorded: the key is left
	// unused, and a corrected request with the same key runs (see the package doc). Nil
	// means DefaultUnrecorded; an empty slice records every 4xx but 408, 425 and 429. A
	// handler can also leave one response unrecorded with DontRecord.
	Unrecorded []int
	// Wait, when positive, makes a request that finds its key in flight wait up to Wait for
	// the first request to finish, and answer with its response, instead of 409 at once
	// (once.Forever.Wait: it polls with growing, jittered pauses, and stops when the client
	// hangs up).
	Wait time.Duration
	// ReplayHeaders are the response headers recorded and replayed; nil means
	// DefaultReplayHeaders.
	ReplayHeaders []string
	// MaxBody is the largest request body read (it is fingerprinted); larger requests get
	// 413. Zero means DefaultMaxBody.
	MaxBody int64
	// MaxResponse is the largest response body recorded; zero means DefaultMaxResponse. A
	// larger response is sent, and its operation recorded done, but cannot be replayed: a
	// retry gets 500 (ProblemNotRecorded).
	MaxResponse int
	// Seal, when set, seals each recorded response (status, replayed headers and body, as
	// JSON) before it is written to once.operations, and opens it when a retry replays it
	// (once.Forever.Seal): a response body carrying a secret (a payment's client secret, a
	// new API key) is never stored in the clear. A response whose Seal fails is sent and
	// recorded done without it, and a retry gets 500 (ProblemNotRecorded); one whose Open
	// fails at replay gets 500 (ProblemInternal), and the record is left as it is.
	Seal once.Sealer
	// StrictKeys accepts only the Structured Field String form the IETF draft specifies
	// (Idempotency-Key: "abc-123"). By default a key that is not quoted is accepted too, as
	// it is (Idempotency-Key: abc-123, as Stripe's clients send it), provided it is
	// printable ASCII without spaces, quotes, backslashes, commas or semicolons.
	StrictKeys bool
	// ValidateKey, when set, checks a key's format (say, that it is a UUID); an error is
	// answered 400 with its text.
	ValidateKey func(key string) error
	// Logger receives, at level Error, the errors a client is not told about: the records
	// could not be read or written (the client gets 500), or a handler's outcome could not be
	// recorded (the client gets the handler's response). Each record carries the request's
	// method, path, key and account, and the error. Nil means slog.Default().
	Logger *slog.Logger
}

// recorded is a response as stored in the operation's result.
type recorded struct {
	Status int         `json:"status"`
	Header http.Header `json:"header,omitempty"`
	Body   []byte      `json:"body,omitempty"`
}

// New returns the middleware cfg describes, or an error naming what is missing or wrong.
func New(cfg Config) (func(http.Handler) http.Handler, error) {
	switch {
	case cfg.DB == nil:
		return nil, errors.New("oncehttp: Config.DB is nil")
	case cfg.Account == nil:
		return nil, errors.New("oncehttp: Config.Account is nil: keys must be scoped to the authenticated account")
	case cfg.Retain < 0 || cfg.Stale < 0 || cfg.Wait < 0 || cfg.MaxBody < 0 || cfg.MaxResponse < 0:
		return nil, errors.New("oncehttp: Config.Retain, Stale, Wait, MaxBody and MaxResponse must not be negative")
	}
	m := &middleware{cfg: cfg, methods: map[string]bool{}, replay: map[string]bool{}, unrecorded: map[int]bool{}}
	unrecorded := cfg.Unrecorded
	if unrecorded == nil {
		unrecorded = DefaultUnrecorded
	}
	for _, s := range unrecorded {
		if s < 400 || s > 499 {
			return nil, fmt.Errorf("oncehttp: Config.Unrecorded holds %d: only a 4xx status can refuse a request before anything was done", s)
		}
		m.unrecorded[s] = true
	}
	if m.cfg.Name == "" {
		m.cfg.Name = DefaultName
	}
	if m.cfg.Retain == 0 {
		m.cfg.Retain = DefaultRetain
	}
	if m.cfg.MaxBody == 0 {
		m.cfg.MaxBody = DefaultMaxBody
	}
	if m.cfg.MaxResponse == 0 {
		m.cfg.MaxResponse = DefaultMaxResponse
	}
	methods := cfg.Methods
	if methods == nil {
		methods = []string{http.MethodPost, http.MethodPut, http.MethodPatch, http.MethodDelete}
	}
	for _, meth := range methods {
		m.methods[strings.ToUpper(meth)] = true
	}
	headers := cfg.ReplayHeaders
	if headers == nil {
		headers = DefaultReplayHeaders
	}
	for _, h := range headers {
		m.replay[http.CanonicalHeaderKey(h)] = true
	}
	m.op = once.Forever{
		Name:        m.cfg.Name,
		Retain:      m.cfg.Retain,
		Stale:       m.cfg.Stale,
		RepeatSafe:  m.cfg.RepeatSafe,
		NoHeartbeat: m.cfg.NoHeartbeat,
		Wait:        m.cfg.Wait,
		// The body is stored base64-encoded inside the JSON record, with the headers.
		MaxResult: m.cfg.MaxResponse/3*4 + 8<<10,
		Seal:      m.cfg.Seal,
	}
	if m.cfg.Seal != nil {
		// Sealed, the record is stored as the base64 of what Seal made of it, with the
		// sealer's own overhead (a nonce and a tag, or a key id).
		m.op.MaxResult = m.op.MaxResult/3*4 + 8<<10
	}
	// Checked here by the runtime's own rule, so a name the operation would refuse on every
	// request (each answered 500) is refused once, at start-up.
	if err := once.CheckName(m.cfg.Name); err != nil {
		return nil, fmt.Errorf("oncehttp: Config.Name: %w", err)
	}
	return func(next http.Handler) http.Handler {
		return &handler{m: m, next: next}
	}, nil
}

type middleware struct {
	cfg        Config
	methods    map[string]bool
	replay     map[string]bool
	unrecorded map[int]bool
	op         once.Forever
}

type handler struct {
	m    *middleware
	next http.Handler
}

// errRetryable releases the key: the handler's answer says the work did not happen.
var errRetryable = errors.New("oncehttp: the response allows a retry")

// errUnrecorded withdraws the claim (once.Rejected): the handler refused the request before
// doing anything.
var errUnrecorded = errors.New("oncehttp: the response is not recorded")

// ServeHTTP answers r from its key's record, or runs the next handler under a new claim.
func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	m := h.m
	if !m.methods[r.Method] {
		h.next.ServeHTTP(w, r)
		return
	}
	fields := r.Header.Values("Idempotency-Key")
	if len(fields) == 0 {
		if m.cfg.Required {
			writeProblem(w, http.StatusBadRequest, ProblemKeyMissing, "Idempotency-Key required",
				"this request performs lasting work: send an Idempotency-Key header, and the same key on every retry")
			return
		}
		h.next.ServeHTTP(w, r)
		return
	}
	if len(fields) > 1 {
		writeProblem(w, http.StatusBadRequest, ProblemKeyMalformed, "Malformed Idempotency-Key", "the request has more than one Idempotency-Key header")
		return
	}
	key, err := parseKey(fields[0], !m.cfg.StrictKeys)
	if err == nil && m.cfg.ValidateKey != nil {
		err = m.cfg.ValidateKey(key)
	}
	stored := ""
	if err == nil {
		stored = once.MustKey(key)
	}
	if err == nil && len(stored) > once.MaxKeyLen {
		// Stored encoded (see once.Forever), where '/' and '%' take three bytes each.
		err = fmt.Errorf("the Idempotency-Key holds too many '/' and '%%' characters (each is stored as three bytes, and the limit is %d)", once.MaxKeyLen)
	}
	if err != nil {
		writeProblem(w, http.StatusBadRequest, ProblemKeyMalformed, "Malformed Idempotency-Key", err.Error())
		return
	}
	account, err := m.cfg.Account(r)
	if err != nil || account == "" {
		detail := "no account"
		if err != nil {
			detail = err.Error()
		}
		writeProblem(w, http.StatusUnauthorized, ProblemUnauthenticated, "Unauthenticated", detail)
		return
	}
	body, err := io.ReadAll(io.LimitReader(r.Body, m.cfg.MaxBody+1))
	if err != nil {
		writeProblem(w, http.StatusBadRequest, ProblemBodyUnreadable, "Unreadable request body", err.Error())
		return
	}
	if int64(len(body)) > m.cfg.MaxBody {
		writeProblem(w, http.StatusRequestEntityTooLarge, ProblemBodyTooLarge, "Request body too large",
			fmt.Sprintf("the body is over the %d-byte limit", m.cfg.MaxBody))
		return
	}
	ref := once.Ref{Scope: once.MustKey(account), Key: stored, Input: requestInput(r, body)}

	var rec *recorder
	resp, out, err := once.ForeverValue(r.Context(), m.cfg.DB, m.op, ref, func(ctx context.Context) (recorded, error) {
		rec = newRecorder()
		req := r.WithContext(context.WithValue(ctx, recorderKey{}, rec))
		req.Body = io.NopCloser(bytes.NewReader(body))
		h.next.ServeHTTP(rec, req)
		return rec.result(m)
	})
	switch {
	case out.Status == once.Ran:
		// Whatever was recorded (done, released, uncertain, nothing; or a failed
		// settle), the handler's own response is what this request gets.
		if err != nil && !errors.Is(err, errRetryable) && !errors.Is(err, errUnrecorded) {
			m.logError(r, key, account, "oncehttp: the response was sent, but its outcome was not recorded", err)
		}
		rec.send(w)
	case err == nil && out.Status == once.InFlight:
		w.Header().Set("Retry-After", "1")
		writeProblem(w, http.StatusConflict, ProblemInFlight, "Request in progress",
			"a request with this Idempotency-Key is being processed; retry it later")
	case err == nil:
		writeReplay(w, resp)
	case errors.Is(err, once.ErrMismatch):
		writeProblem(w, http.StatusUnprocessableEntity, ProblemMismatch, "Idempotency-Key reused",
			"this Idempotency-Key was used with a different request; use a new key for new work")
	case errors.Is(err, once.ErrUncertain):
		writeProblem(w, http.StatusConflict, ProblemUncertain, "Outcome uncertain",
			"the first request with this Idempotency-Key may or may not have taken effect; it is awaiting reconciliation")
	case errors.Is(err, once.ErrResultTooLarge):
		writeProblem(w, http.StatusInternalServerError, ProblemNotRecorded, "Response not recorded",
			"the first request with this Idempotency-Key was carried out, but its response could not be kept (too large, or it could not be sealed)")
	case r.Context().Err() != nil && errors.Is(err, r.Context().Err()):
		// The client hung up before its claim was answered (any claim that landed
		// was withdrawn): nobody is left to answer or to tell.
	default:
		m.logError(r, key, account, "oncehttp: the request's records could not be read or written", err)
		writeProblem(w, http.StatusInternalServerError, ProblemInternal, "Internal error", "")
	}
}

func (m *middleware) logError(r *http.Request, key, account, msg string, err error) {
	l := m.cfg.Logger
	if l == nil {
		l = slog.Default()
	}
	l.ErrorContext(context.WithoutCancel(r.Context()), msg, slog.String("method", r.Method), slog.String("path", r.URL.Path),
		slog.String("key", key), slog.String("account", account), slog.Any("error", err))
}

// requestInput is what a key promises: the request's method, target, media type and body.
// A JSON body goes in as JSON, so once.Fingerprint compares it by value; any other body by
// its SHA-256.
func requestInput(r *http.Request, body []byte) any {
	media, _, _ := mime.ParseMediaType(r.Header.Get("Content-Type"))
	in := map[string]any{"method": r.Method, "target": r.URL.RequestURI(), "type": media}
	switch {
	case len(body) == 0:
	case (media == "application/json" || strings.HasSuffix(media, "+json")) && json.Valid(body):
		in["json"] = json.RawMessage(body)
	default:
		sum := sha256.Sum256(body)
		in["sha256"] = hex.EncodeToString(sum[:])
	}
	return in
}

// writeReplay sends a recorded response again.
func writeReplay(w http.ResponseWriter, resp recorded) {
	h := w.Header()
	for k, vs := range resp.Header {
		h[k] = append([]string(nil), vs...)
	}
	h.Set("Idempotent-Replayed", "true")
	w.WriteHeader(resp.Status)
	w.Write(resp.Body)
}

// recorder buffers the handler's response until its outcome is recorded.
type recorder struct {
	header http.Header
	status int
	body   bytes.Buffer
	// dontRecord is set by DontRecord, perhaps from another goroutine of the handler's.
	dontRecord atomic.Bool
}

// recorderKey is the context key of the recorder a request's handler writes to.
type recorderKey struct{}

// DontRecord tells the middleware not to record the response to r, whatever its status: the
// handler refused the request before doing anything (a check Config.Unrecorded's statuses do
// not cover, such as a 409 for a precondition the client can change). The key is left as if
// it had never been used (see once.Rejected), and a corrected request with the same key runs.
// It reports whether r came through the middleware; if not, it does nothing.
func DontRecord(r *http.Request) bool {
	rec, ok := r.Context().Value(recorderKey{}).(*recorder)
	if ok {
		rec.dontRecord.Store(true)
	}
	return ok
}

func newRecorder() *recorder { return &recorder{header: http.Header{}} }

// Header returns the headers the handler sets.
func (rec *recorder) Header() http.Header { return rec.header }

// WriteHeader keeps the first status written, as net/http does.
func (rec *recorder) WriteHeader(status int) {
	if rec.status == 0 {
		rec.status = status
	}
}

// Write buffers p.
func (rec *recorder) Write(p []byte) (int, error) {
	if rec.status == 0 {
		rec.status = http.StatusOK
	}
	return rec.body.Write(p)
}

// result classifies the response (see the package doc) and returns it as recorded.
func (rec *recorder) result(m *middleware) (recorded, error) {
	if rec.status == 0 {
		rec.status = http.StatusOK
	}
	resp := recorded{Status: rec.status, Body: rec.body.Bytes()}
	for k, vs := range rec.header {
		if m.replay[k] {
			if resp.Header == nil {
				resp.Header = http.Header{}
			}
			resp.Header[k] = vs
		}
	}
	switch s := rec.status; {
	case rec.dontRecord.Load() || m.unrecorded[s]:
		return resp, once.Rejected(fmt.Errorf("%w: status %d", errUnrecorded, s))
	case s >= 500 || s == http.StatusRequestTimeout || s == http.StatusTooEarly || s == http.StatusTooManyRequests:
		return resp, fmt.Errorf("%w: status %d", errRetryable, s)
	}
	return resp, nil
}

// send writes the buffered response to w.
func (rec *recorder) send(w http.ResponseWriter) {
	h := w.Header()
	for k, vs := range rec.header {
		h[k] = vs
	}
	w.WriteHeader(rec.status)
	w.Write(rec.body.Bytes())
}
