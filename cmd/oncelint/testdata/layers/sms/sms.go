// Package sms is a gateway client.
package sms

// Client talks to the gateway.
type Client struct{}

// Message is one text.
type Message struct{ To, RequestID string }

// Send sends a text.
func (c *Client) Send(m Message) error { return nil }
