// Package accounts is the first of two packages generated in one run; the second, billing,
// takes its types.
package accounts

import "context"

// UUID is a UUID as its 16 bytes.
type UUID [16]byte

// ID names an account; its key text is its own.
type ID struct{ Region, Number string }

// OnceKey makes ID a key part.
func (id ID) OnceKey() string { return id.Region + ":" + id.Number }

// Account is a customer account.
type Account struct {
	ID    ID
	Owner UUID
}

// Open opens an account once for ever.
//
//once:forever key=acct.ID
func Open(ctx context.Context, acct Account) (Account, error) { return acct, nil }

// Invite invites the owner once while an invitation is open.
//
//once:open key=acct.Owner
func Invite(ctx context.Context, acct *Account) error { return nil }
