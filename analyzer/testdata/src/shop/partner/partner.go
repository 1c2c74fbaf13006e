// Package partner sends orders to the fulfilment partner's API. // want package:"once002"
//
// The partner takes an Idempotency-Key on every POST.
package partner

import (
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/hex"
	"fmt"
	"io"
	"net/http"
)

type Client struct {
	base string
	http *http.Client
}

// Post sends body to path with key as its Idempotency-Key: the caller names the work.
func (c *Client) Post(ctx context.Context, path, key string, body []byte) error { // want Post:"keyParam\\(key\\)"
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, c.base+path, bytes.NewReader(body))
	if err != nil {
		return fmt.Errorf("partner: %s: %w", path, err)
	}
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("Idempotency-Key", key)
	resp, err := c.http.Do(req)
	if err != nil {
		return fmt.Errorf("partner: %s: %w", path, err)
	}
	return resp.Body.Close()
}

// Ship asks for an order to be shipped; step names which shipment of the order this is
// ("first", "replacement").
func (c *Client) Ship(ctx context.Context, orderID, step string) error { // want Ship:"keyParam\\(orderID, step\\)"
	key := fmt.Sprintf("ship/%s/%s", orderID, step)
	return c.Post(ctx, "/v1/shipments", key, []byte(orderID))
}

// Track asks where a shipment is: the id goes in the path, and a GET needs no key.
func (c *Client) Track(ctx context.Context, shipmentID string) (*http.Response, error) {
	return c.http.Get(c.base + "/v1/shipments/" + shipmentID)
}

// Cancel makes its key from random bytes on every call: a retry cancels anew.
func (c *Client) Cancel(ctx context.Context, orderID string) error {
	return c.Post(ctx, "/v1/cancellations", "cancel-"+nonce(), []byte(orderID)) // want `idempotency key passed to \(\*partner.Client\).Post comes from partner.nonce, which returns rand.Read: a retry makes a new key`
}

// Return books a return pickup with a token read from crypto/rand through io.ReadFull.
func (c *Client) Return(ctx context.Context, orderID string) error { // want Return:"keyParam\\(orderID\\)"
	buf := make([]byte, 12)
	if _, err := io.ReadFull(rand.Reader, buf); err != nil {
		return err
	}
	token := base64.RawURLEncoding.EncodeToString(buf)
	return c.Ship(ctx, orderID, "return-"+token) // want `idempotency key passed to \(\*partner.Client\).Ship comes from rand.Reader`
}

// Reship keys the replacement by the order and the complaint it answers: the same on
// every retry.
func (c *Client) Reship(ctx context.Context, orderID string, complaintID int64) error { // want Reship:"keyParam\\(orderID, complaintID\\)"
	return c.Ship(ctx, orderID, fmt.Sprintf("replacement-%d", complaintID))
}

// nonce returns 16 random bytes, hex-encoded.
func nonce() string { // want nonce:"unstable\\(partner.nonce, which returns rand.Read\\)"
	var b [16]byte
	if _, err := rand.Read(b[:]); err != nil {
		panic(err)
	}
	return hex.EncodeToString(b[:])
}
