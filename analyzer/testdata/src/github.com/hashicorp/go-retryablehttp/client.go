// Package retryablehttp is a stub of go-retryablehttp: a client that sends a request
// again when it fails.
package retryablehttp

import (
	"io"
	"net/http"
)

type Request struct{ *http.Request }

func NewRequest(method, url string, rawBody interface{}) (*Request, error) {
	r, err := http.NewRequest(method, url, nil)
	return &Request{r}, err
}

type Client struct{ RetryMax int }

func NewClient() *Client { return &Client{RetryMax: 4} }

func (c *Client) Do(req *Request) (*http.Response, error) { return nil, nil }

func (c *Client) Post(url, bodyType string, body interface{}) (*http.Response, error) {
	return nil, nil
}

var _ io.Reader
