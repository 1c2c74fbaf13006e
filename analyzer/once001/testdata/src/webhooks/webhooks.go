// Package webhooks posts to endpoints no catalogue entry classifies: a subscriber's URL
// read from configuration. Such a POST is listed in the coverage; only the code's own
// retry of it, with no idempotency key, is a finding.
package webhooks

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"math/rand"
	"net/http"
	"net/smtp"
	"time"

	"github.com/hashicorp/go-retryablehttp"
)

// Config holds the subscriber's endpoint.
type Config struct{ URL string }

// Deliver posts again whenever the post fails or answers other than 2xx: a timeout after
// the subscriber took the event delivers it twice.
func Deliver(ctx context.Context, cfg Config, body []byte) error {
	for attempt := 0; attempt < 5; attempt++ {
		resp, err := http.Post(cfg.URL, "application/json", bytes.NewReader(body)) // want `call of http.Post sends a POST request with no //once: promise, on a path that runs it again: a repeat sends a POST request again; declare a promise on webhooks.Deliver, or send an idempotency key the receiver honours`
		if err == nil && resp.StatusCode < 300 {
			return nil
		}
		time.Sleep(time.Second)
	}
	return errors.New("gave up")
}

// Query posts a question and reads the answer, asking again after a failure: the POST
// carries a query, whose answer the body holds, not a delivery.
func Query(cfg Config, question []byte) ([]byte, error) {
	for attempt := 0; attempt < 3; attempt++ {
		resp, err := http.Post(cfg.URL, "application/json", bytes.NewReader(question))
		if err != nil {
			continue
		}
		answer, err := io.ReadAll(resp.Body)
		resp.Body.Close()
		return answer, err
	}
	return nil, errors.New("gave up")
}

// Ask posts a question until it gets through, and reads the answer after the loop: a
// query too.
func Ask(cfg Config, question []byte) ([]byte, error) {
	var resp *http.Response
	var err error
	for attempt := 0; attempt < 3; attempt++ {
		if resp, err = http.Post(cfg.URL, "application/json", bytes.NewReader(question)); err == nil {
			break
		}
	}
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	return io.ReadAll(resp.Body)
}

// Drain retries a delivery whose answer it only drains: still a delivery.
func Drain(cfg Config, body []byte) error {
	for attempt := 0; attempt < 3; attempt++ {
		resp, err := http.Post(cfg.URL, "application/json", bytes.NewReader(body)) // want `call of http.Post sends a POST request with no //once: promise, on a path that runs it again`
		if err != nil {
			continue
		}
		_, _ = io.Copy(io.Discard, resp.Body)
		resp.Body.Close()
		return nil
	}
	return errors.New("gave up")
}

// DeliverKeyed retries too, but every attempt carries the same key the subscriber
// de-duplicates by.
func DeliverKeyed(ctx context.Context, cfg Config, id string, body []byte) error {
	for attempt := 0; attempt < 5; attempt++ {
		req, err := http.NewRequestWithContext(ctx, http.MethodPost, cfg.URL, bytes.NewReader(body))
		if err != nil {
			return err
		}
		req.Header.Set("Idempotency-Key", id)
		resp, err := http.DefaultClient.Do(req)
		if err == nil && resp.StatusCode < 300 {
			return nil
		}
	}
	return errors.New("gave up")
}

// Replace retries a PUT: repeating it leaves what the first left (RFC 9110).
func Replace(ctx context.Context, cfg Config, body []byte) error {
	var err error
	for attempt := 0; attempt < 5; attempt++ {
		var req *http.Request
		req, err = http.NewRequestWithContext(ctx, http.MethodPut, cfg.URL, bytes.NewReader(body))
		if err != nil {
			return err
		}
		if _, err = http.DefaultClient.Do(req); err == nil {
			return nil
		}
	}
	return err
}

// Fanout posts once to each subscriber: the loop goes on after a success, and retries
// nothing.
func Fanout(cfgs []Config, body []byte) {
	for _, c := range cfgs {
		if _, err := http.Post(c.URL, "application/json", bytes.NewReader(body)); err != nil {
			continue
		}
	}
}

// Broadcast posts once to each subscriber, with attempts at each: the outer loop goes
// on after a success, the attempts only after a failure, and they retry.
func Broadcast(cfgs []Config, body []byte) {
	for _, c := range cfgs {
		for attempt := 0; attempt < 3; attempt++ {
			if _, err := http.Post(c.URL, "application/json", bytes.NewReader(body)); err == nil { // want `call of http.Post sends a POST request with no //once: promise, on a path that runs it again: a repeat sends a POST request again; declare a promise on webhooks.Broadcast`
				break
			}
		}
	}
}

// Handle posts once per request it serves: a client's retry of the request repeats it,
// but what the subscriber does with a POST is not known, so the coverage lists it.
func Handle(cfg Config) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		_, _ = http.Post(cfg.URL, "application/json", r.Body)
	}
}

// Heartbeat posts at each tick of a timer: a report made again on purpose, not a retry.
func Heartbeat(ctx context.Context, cfg Config) {
	t := time.NewTicker(time.Minute)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			_, _ = http.Post(cfg.URL, "text/plain", nil)
		}
	}
}

// post is the service's own retrying client: the library posts again after a failure.
func post(url string, body []byte) error {
	_, err := retryablehttp.NewClient().Post(url, "application/json", body)
	return err
}

// Notify hands its URL to post: the request, and the retry, are made here.
func Notify(cfg Config, body []byte) error {
	return post(cfg.URL, body) // want `call of webhooks.post sends a POST request with no //once: promise, on a path that runs it again`
}

// Sender delivers an event somewhere.
type Sender interface{ Send(event []byte) error }

// hook posts an event to its endpoint, once.
type hook struct{ url string }

func (h *hook) Send(event []byte) error {
	_, err := http.Post(h.url, "application/json", bytes.NewReader(event)) // want `call of http.Post sends a POST request with no //once: promise, on a path that runs it again: a repeat sends a POST request again; declare a promise on \(\*webhooks.hook\).Send`
	return err
}

// Dispatch retries any sender that failed: the implementation that posts is repeated,
// and reported where it posts.
func Dispatch(s Sender, event []byte) {
	for i := 0; i < 3; i++ {
		if err := s.Send(event); err != nil {
			continue
		}
		return
	}
}

// NewHook returns a sender of the package's own type, as a registry would.
func NewHook(url string) Sender { return &hook{url: url} }

// Notifier notifies someone of a code.
type Notifier interface{ Notify(to string) error }

type mailer struct{}

// Notify mails a fresh code: new content each time, not a duplicate.
func (mailer) Notify(to string) error {
	code := fmt.Sprint(rand.Int())
	return smtp.SendMail("mail.example.com:25", nil, "shop@example.com", []string{to}, []byte(code))
}

type poster struct{ url string }

// Notify posts to a partner, once.
func (p poster) Notify(to string) error {
	_, err := http.Post(p.url, "text/plain", bytes.NewReader([]byte(to)))
	return err
}

// Notifiers are the package's notifiers.
var Notifiers = []Notifier{mailer{}, poster{}}

// SendCode notifies through a notifier once per request: the mail's fresh code is new
// work, and the partner's POST, not retried, is the coverage's, not a reason to report
// the mail.
func SendCode(n Notifier) http.HandlerFunc {
	return func(w http.ResponseWriter, r *http.Request) {
		_ = n.Notify(r.FormValue("to"))
	}
}

// Response is what request keeps of an answer, for every caller.
type Response struct {
	Status int
	Body   string
}

// request sends what it is handed and keeps the answer's body: whether that body is an
// answer is its caller's to say.
func request(req *http.Request) Response {
	resp, err := http.DefaultClient.Do(req)
	if err != nil {
		return Response{}
	}
	defer resp.Body.Close()
	body, _ := io.ReadAll(resp.Body)
	return Response{Status: resp.StatusCode, Body: string(body)}
}

// postJSON posts through the shared helper.
func postJSON(url, body string) Response {
	req, err := http.NewRequest(http.MethodPost, url, bytes.NewBufferString(body))
	if err != nil {
		return Response{}
	}
	return request(req)
}

// Announce posts a notification until the endpoint answers 200, through a helper that
// reads every answer: the retry looks only at the status, so it is a delivery.
func Announce(cfg Config, msg string) {
	for i := 0; i < 3; i++ {
		resp := postJSON(cfg.URL, msg) // want `call of webhooks.postJSON sends a POST request with no //once: promise, on a path that runs it again`
		if resp.Status == http.StatusOK {
			return
		}
		time.Sleep(time.Second)
	}
}

// Page tests the status of the helper's answer where it is returned.
func Page(cfg Config, msg string) {
	for i := 0; i < 3; i++ {
		if postJSON(cfg.URL, msg).Status == http.StatusOK { // want `call of webhooks.postJSON sends a POST request with no //once: promise, on a path that runs it again`
			return
		}
	}
}

// Count posts again while the answer counts fewer than 2 items: a number, not a status,
// so a loop over it is no retry.
func Count(cfg Config, msg string) {
	for postJSON(cfg.URL, msg).Status < 2 {
	}
}
