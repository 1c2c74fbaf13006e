// Package kinds declares one guard of every kind, on functions and methods, returning error
// or (T, error): the golden input of oncegen's generator tests.
package kinds

import (
	"context"
	"errors"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"
)

// User is a customer.
type User struct {
	ID    int64
	Email string
}

// Order is a purchase.
type Order struct {
	ID       [16]byte
	Org      string
	Amount   int64
	Currency string
}

// Receipt is what a charge returns.
type Receipt struct{ ChargeID string }

// Day is a named date string.
type Day string

// Mailer sends mail.
type Mailer interface {
	Send(ctx context.Context, to, body string) error
}

// Summary is a memoised lookup.
//
//once:request key=u.ID
func Summary(ctx context.Context, u User) (string, error) { return u.Email, nil }

// Approve decides from a read, one decision per org at a time.
//
//once:transaction key=org wait=false timeout=2s
func Approve(ctx context.Context, tx pgx.Tx, org string, amount int64) error { return nil }

// Generate spends one unit of the org's daily quota per idea.
//
//once:statement key=org,day cap=limit n=len(ideas) name=ideas:daily
func Generate(ctx context.Context, org string, day Day, limit int, ideas ...string) ([]string, error) {
	return ideas, nil
}

// Alert fires once per outage.
//
//once:episode key=source
func Alert(ctx context.Context, m Mailer, source string) error { return nil }

// StartRun starts at most one run per org while one is open.
//
//once:open key=org stale=45m
func StartRun(ctx context.Context, org int64) (int64, error) { return org, nil }

// Billing charges orders.
type Billing struct{ tenant string }

// Charge charges an order once for ever, its input fingerprinted.
//
//once:forever key=order.ID scope=b.tenant fingerprint=order.Amount,order.Currency retain=720h repeat=safe
func (b *Billing) Charge(ctx context.Context, order Order) (Receipt, error) { return Receipt{}, nil }

// Welcome sends the welcome mail.
//
//once:forever key=u.ID wait=3s
func (b Billing) Welcome(ctx context.Context, m Mailer, u User) error { return nil }

// SendReply emails an answer with the provider's idempotency key.
//
//once:provider key=reply prefix=answer ttl=24h
func SendReply(ctx context.Context, m Mailer, reply int64) error { return nil }

// Reconcile runs on one instance at a time; its parameters are named like the wrapper's
// locals, and one is unnamed.
//
//once:lease key=key,at ttl=10s wait=500ms
func Reconcile(_ context.Context, db *Billing, key string, at time.Time, _ int) error { return nil }

// Remind reminds once while a reminder is open; its parameters are named like packages the
// wrapper uses, which it then imports under other names (fmt, for the error of a key that
// may fail to encode: a nil pointer).
//
//once:open key=fmt,time stale=5m
func Remind(ctx context.Context, fmt *string, time time.Time) error { return nil }

// Email is an address that marshals itself as text, which may fail.
type Email string

// MarshalText returns the address in lower case; it refuses an empty one.
func (e Email) MarshalText() ([]byte, error) {
	if e == "" {
		return nil, errors.New("empty address")
	}
	return []byte(strings.ToLower(string(e))), nil
}

// Subscribe subscribes an address once for ever, per tenant: both its key and its scope may
// fail to encode, so the wrapper checks each.
//
//once:forever key=email scope=tenant
func Subscribe(ctx context.Context, email Email, tenant *int64) (bool, error) { return true, nil }

// Import records a row given as an anonymous struct, whose field tags are part of its type:
// the wrapper repeats them as written, keys out of order included.
//
//once:forever key=row.ID
func Import(ctx context.Context, row struct {
	ID   int64  `json:"id" db:"id"`
	Note string `xml:"note,attr"`
}) error {
	return nil
}

// key is named like the wrapper's local for a key that may fail to encode, which then takes
// another name.
//
//once:forever key=email
func key(ctx context.Context, email Email) error { return nil }

// sendTriggeredAlert is unexported, and so is every name generated from it: its wrapper
// sendTriggeredAlertOnce and its rearm function rearmSendTriggeredAlert.
//
//once:episode key=rule
func sendTriggeredAlert(ctx context.Context, m Mailer, rule string) error { return nil }

// sealer seals recorded results; it is a once.Sealer by its methods, without importing the
// runtime.
type sealer struct{ keyID string }

func (sealer) Seal(ctx context.Context, plain []byte) ([]byte, error)  { return plain, nil }
func (sealer) Open(ctx context.Context, sealed []byte) ([]byte, error) { return sealed, nil }

// resultSealer is the package's sealer of payment results.
var resultSealer = sealer{keyID: "k1"}

func sealerFor(keyID string) *sealer { return &sealer{keyID: keyID} }

// CreateIntent creates a payment whose receipt holds a secret: it is recorded sealed.
//
//once:forever key=order.ID seal=resultSealer
func CreateIntent(ctx context.Context, order Order) (Receipt, error) { return Receipt{}, nil }

// Refund keeps only the digest of its receipt.
//
//once:forever key=order.ID result=digest
func Refund(ctx context.Context, order Order) (Receipt, error) { return Receipt{}, nil }

// Payout records its receipt sealed by a sealer a call returns.
//
//once:forever key=order.ID result=value seal=sealerFor("k2")
func Payout(ctx context.Context, order Order) (Receipt, error) { return Receipt{}, nil }

// Void records nothing of its receipt.
//
//once:forever key=order.ID result=none
func Void(ctx context.Context, order Order) (Receipt, error) { return Receipt{}, nil }
