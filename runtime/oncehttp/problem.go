package oncehttp

import (
	"encoding/json"
	"net/http"
	"strconv"
)

// Problem types the middleware answers with, as the "type" member of an
// application/problem+json body (RFC 9457), so a client can tell them apart without
// reading the text.
const (
	// ProblemKeyMissing: 400, the request needs an Idempotency-Key and has none.
	ProblemKeyMissing = "urn:once:idempotency-key-missing"
	// ProblemKeyMalformed: 400, the Idempotency-Key is not a valid key.
	ProblemKeyMalformed = "urn:once:idempotency-key-malformed"
	// ProblemUnauthenticated: 401, the request's account could not be established.
	ProblemUnauthenticated = "urn:once:unauthenticated"
	// ProblemBodyTooLarge: 413, the request body is over the configured limit.
	ProblemBodyTooLarge = "urn:once:request-body-too-large"
	// ProblemBodyUnreadable: 400, the request body could not be read to its end (the client
	// stopped sending it), so there is no request to fingerprint.
	ProblemBodyUnreadable = "urn:once:request-body-unreadable"
	// ProblemInFlight: 409, a request with the same key is being processed; retry later
	// (Retry-After says when).
	ProblemInFlight = "urn:once:idempotency-key-in-flight"
	// ProblemMismatch: 422, the key was first used with a different request.
	ProblemMismatch = "urn:once:idempotency-key-reused"
	// ProblemUncertain: 409, the first request's outcome is unknown and awaits
	// reconciliation; retrying will not help until it is resolved.
	ProblemUncertain = "urn:once:outcome-uncertain"
	// ProblemNotRecorded: 500, the first response was too large to record, so it cannot be
	// replayed (the work was done).
	ProblemNotRecorded = "urn:once:response-not-recorded"
	// ProblemInternal: 500, the middleware could not reach its records.
	ProblemInternal = "urn:once:internal"
)

// problem is an application/problem+json body.
type problem struct {
	Type   string `json:"type"`
	Title  string `json:"title"`
	Status int    `json:"status"`
	Detail string `json:"detail,omitempty"`
}

func writeProblem(w http.ResponseWriter, status int, typ, title, detail string) {
	body, _ := json.Marshal(problem{Type: typ, Title: title, Status: status, Detail: detail})
	h := w.Header()
	h.Set("Content-Type", "application/problem+json")
	h.Set("Content-Length", strconv.Itoa(len(body)))
	w.WriteHeader(status)
	w.Write(body)
}
