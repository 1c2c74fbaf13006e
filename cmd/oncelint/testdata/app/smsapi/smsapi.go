// Package smsapi is the client of an SMS gateway that deduplicates by request id.
package smsapi

import "context"

// Client talks to the gateway.
type Client struct{ Token string }

// Message is one text.
type Message struct {
	To, Body  string
	RequestID string
}

// Send sends a text; a repeated RequestID is answered without sending again.
func (c *Client) Send(ctx context.Context, m Message) error { return nil }
