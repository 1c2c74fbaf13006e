// Package courier is a dependency the module vendors: an HTTP client that posts again
// after a failure, and a batcher that posts from a goroutine of its own.
package courier

import (
	"bytes"
	"net/http"
	"time"
)

// Client posts to any URL.
type Client struct{ http *http.Client }

// New returns a client.
func New() *Client { return &Client{http: &http.Client{Timeout: 5 * time.Second}} }

// Post posts body to url, again after an error, up to three times.
func (c *Client) Post(url string, body []byte) (err error) {
	for i := 0; i < 3; i++ {
		var resp *http.Response
		if resp, err = c.http.Post(url, "application/json", bytes.NewReader(body)); err == nil {
			return resp.Body.Close()
		}
	}
	return err
}

// Batcher posts what it is given in batches, in the background.
type Batcher struct {
	url  string
	todo chan []byte
}

// Start starts a batcher posting to url.
func Start(url string) *Batcher {
	b := &Batcher{url: url, todo: make(chan []byte, 64)}
	go b.loop()
	return b
}

// Add queues an item.
func (b *Batcher) Add(item []byte) { b.todo <- item }

func (b *Batcher) loop() {
	for item := range b.todo {
		for i := 0; i < 3; i++ {
			if _, err := http.Post(b.url, "application/json", bytes.NewReader(item)); err == nil {
				break
			}
		}
	}
}
