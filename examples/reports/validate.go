package reports

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strconv"
)

// maxBody is the largest request body the API reads.
const maxBody = 1 << 20

// submission is the body of POST /submissions.
type submission struct {
	Title string `json:"title"`
	Body  string `json:"body"`
}

func (s submission) check() error {
	if s.Title == "" || s.Body == "" {
		return errors.New(`send {"title": ..., "body": ...}`)
	}
	return nil
}

func (in ReportInput) check() error {
	if in.Tone != "" && in.Tone != "plain" && in.Tone != "formal" {
		return fmt.Errorf("tone %q: use plain or formal", in.Tone)
	}
	return nil
}

// inputKey is the context key of a request's decoded body.
type inputKey struct{}

// validated answers a request whose path id or body is not valid with 404 or 400 before it
// reaches the front door, so a malformed request is remembered nowhere: as with Stripe's
// keys, only a request that started to be carried out is recorded under its key, and the
// client may correct the request and send it again with the same key. A valid request goes
// on with its body intact (the front door fingerprints it) and its decoded value in its
// context (see input).
func validated[T interface{ check() error }](next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if id := r.PathValue("id"); id != "" {
			if n, err := strconv.ParseInt(id, 10, 64); err != nil || n <= 0 {
				writeProblem(w, http.StatusNotFound, "Not found", "")
				return
			}
		}
		body, err := io.ReadAll(http.MaxBytesReader(w, r.Body, maxBody))
		var v T
		if err == nil {
			dec := json.NewDecoder(bytes.NewReader(body))
			dec.DisallowUnknownFields()
			err = dec.Decode(&v)
		}
		if err == nil {
			err = v.check()
		}
		if err != nil {
			writeProblem(w, http.StatusBadRequest, "Bad request", err.Error())
			return
		}
		r.Body = io.NopCloser(bytes.NewReader(body))
		next.ServeHTTP(w, r.WithContext(context.WithValue(r.Context(), inputKey{}, v)))
	})
}

// input returns the body validated decoded for r.
func input[T any](r *http.Request) T {
	v, _ := r.Context().Value(inputKey{}).(T)
	return v
}
