// Package messaging is a stub of Firebase Cloud Messaging's Go client, shaped as the real one
// is: Client embeds the type whose methods send.
package messaging

import "context"

type Message struct {
	Token string
	Data  map[string]string
}

type fcmClient struct{ endpoint string }

// Send sends one message.
func (c *fcmClient) Send(ctx context.Context, m *Message) (string, error) { return "", nil }

// Client is the messaging client an app holds.
type Client struct {
	*fcmClient
	project string
}
