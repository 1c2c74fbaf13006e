// Package gateway is the repository's own client of its message gateway, a module of its
// own beside the app.
package gateway

import (
	"bytes"
	"net/http"
)

// Client posts to the gateway.
type Client struct{ URL string }

// Publish posts one message.
func (c *Client) Publish(topic, body string) error {
	resp, err := http.Post(c.URL+"/publish/"+topic, "text/plain", bytes.NewBufferString(body))
	if err != nil {
		return err
	}
	return resp.Body.Close()
}
