// Package ids makes identifiers for the shop's requests. // want package:"once002"
package ids

import "github.com/oklog/ulid/v2"

// NewRequestKey returns a fresh, sortable request id.
func NewRequestKey() string { return "req_" + ulid.Make().String() } // want NewRequestKey:"unstable\\(ids.NewRequestKey, which returns ulid.Make\\)"

// OrderKey names the work of one order step: the same on every retry.
func OrderKey(orderID, step string) string { return "order/" + orderID + "/" + step }
