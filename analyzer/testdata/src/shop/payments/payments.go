// Package payments charges and refunds orders and renews subscriptions. // want package:"once002"
package payments

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/http"
	"strings"
	"time"

	"github.com/google/uuid"
	"github.com/openai/openai-go/v3"
	"github.com/openai/openai-go/v3/option"
	stripe "github.com/stripe/stripe-go/v82"
	"github.com/stripe/stripe-go/v82/charge"
	"github.com/stripe/stripe-go/v82/refund"

	"github.com/jackc/pgx/v5/pgxpool"
	once "github.com/oncekit/once/runtime"

	"shop/ids"
	"shop/partner"
)

type Order struct {
	ID         string
	CustomerID string
	Amount     int64
	RefundKey  string
	ChargeKey  string
}

type Subscription struct {
	ID        string
	Customer  string
	Amount    int64
	UpdatedAt time.Time
}

type Service struct {
	db      *pgxpool.Pool
	stripe  *stripe.Client
	ai      openai.Client
	http    *http.Client
	partner *partner.Client
}

// Refund makes a new key on every call: a retry after a timeout refunds twice.
func (s *Service) Refund(ctx context.Context, o Order) error {
	params := &stripe.RefundParams{Charge: stripe.String(o.ID)}
	params.SetIdempotencyKey(uuid.NewString()) // want `idempotency key comes from uuid.NewString: a retry makes a new key, so the provider does the work again`
	_, err := refund.New(params)
	return err
}

// Charge builds its key from the clock.
func (s *Service) Charge(ctx context.Context, o Order) error {
	key := fmt.Sprintf("charge-%s-%d", o.ID, time.Now().UnixNano())
	_, err := charge.New(&stripe.ChargeParams{
		Params: stripe.Params{IdempotencyKey: stripe.String(key)}, // want `idempotency key is derived from time.Now: a retry makes a different key`
		Amount: stripe.Int64(o.Amount),
	})
	return err
}

// RefundPartial sets a random key on the order but never stores it: the next attempt
// loads the order again and makes another.
func (s *Service) RefundPartial(ctx context.Context, o Order, amount int64) error {
	o.RefundKey = uuid.New().String()
	params := &stripe.RefundParams{Charge: stripe.String(o.ID), Amount: stripe.Int64(amount)}
	params.SetIdempotencyKey(o.RefundKey) // want `idempotency key comes from uuid.New`
	_, err := refund.New(params)
	return err
}

// Summarize asks for a summary with a fresh request id from a helper package.
func (s *Service) Summarize(ctx context.Context, o Order) error {
	_, err := s.ai.Chat.Completions.New(ctx, openai.ChatCompletionNewParams{Model: openai.ChatModelGPT4o},
		option.WithHeader("Idempotency-Key", ids.NewRequestKey())) // want `idempotency key comes from ids.NewRequestKey, which returns ulid.Make`
	return err
}

// Notify posts to a partner with a random key read from crypto/rand.
func (s *Service) Notify(ctx context.Context, o Order) error {
	b := make([]byte, 16)
	if _, err := rand.Read(b); err != nil {
		return err
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, "http://partner.invalid/orders", strings.NewReader(o.ID))
	if err != nil {
		return err
	}
	req.Header.Set("Idempotency-Key", hex.EncodeToString(b)) // want `idempotency key comes from rand.Read`
	resp, err := s.http.Do(req)
	if err != nil {
		return err
	}
	return resp.Body.Close()
}

// DailyKey is one key per calendar day of the server's clock: a retry after midnight is a
// new charge.
func (s *Service) DailyKey(o Order) string { // want DailyKey:"unstable"
	return once.ProviderKey("daily", o.ID+"/"+time.Now().UTC().Format("2006-01-02")) // want `idempotency key is derived from time.Now`
}

// RefundKeyed derives the key from the order: stable.
func (s *Service) RefundKeyed(ctx context.Context, o Order) error {
	params := &stripe.RefundParams{Charge: stripe.String(o.ID)}
	params.SetIdempotencyKey("refund-" + o.ID)
	_, err := refund.New(params)
	return err
}

// Renew uses the subscription's own UpdatedAt: a version of the row, the same on every
// retry of this renewal, and a new one when the subscription changes.
func (s *Service) Renew(ctx context.Context, sub Subscription) error {
	params := &stripe.ChargeParams{Amount: stripe.Int64(sub.Amount), Customer: stripe.String(sub.Customer)}
	params.SetIdempotencyKey(fmt.Sprintf("renew-%s-%d", sub.ID, sub.UpdatedAt.Unix()))
	_, err := charge.New(params)
	return err
}

// Invoice keys by the billing period the caller passes in.
func (s *Service) Invoice(ctx context.Context, customer string, period time.Time) error { // want Invoice:"keyParam\\(customer, period\\)"
	params := &stripe.ChargeParams{Customer: stripe.String(customer)}
	params.SetIdempotencyKey(customer + "/" + period.Format("2006-01"))
	_, err := charge.New(params)
	return err
}

// ChargeOnce makes a random key once, stores it on the row, and reuses it on every retry.
func (s *Service) ChargeOnce(ctx context.Context, o Order) error {
	if o.ChargeKey == "" {
		o.ChargeKey = uuid.NewString()
		if _, err := s.db.Exec(ctx, `UPDATE orders SET charge_key = $1 WHERE id = $2 AND charge_key IS NULL`, o.ChargeKey, o.ID); err != nil {
			return fmt.Errorf("payments: store charge key: %w", err)
		}
	}
	params := &stripe.ChargeParams{Amount: stripe.Int64(o.Amount)}
	params.SetIdempotencyKey(o.ChargeKey)
	_, err := charge.New(params)
	return err
}

// ChargeClaimed proposes a key and keeps whichever the row already holds.
func (s *Service) ChargeClaimed(ctx context.Context, o Order) error {
	key := uuid.NewString()
	err := s.db.QueryRow(ctx,
		`UPDATE orders SET charge_key = COALESCE(charge_key, $1) WHERE id = $2 RETURNING charge_key`,
		key, o.ID).Scan(&key)
	if err != nil {
		return fmt.Errorf("payments: claim charge key: %w", err)
	}
	params := &stripe.ChargeParams{Amount: stripe.Int64(o.Amount)}
	params.SetIdempotencyKey(key)
	_, err = charge.New(params)
	return err
}

// ChargeInGuard takes the key the provider guard derived from the row.
func (s *Service) ChargeInGuard(ctx context.Context, o Order) error {
	params := &stripe.ChargeParams{Amount: stripe.Int64(o.Amount)}
	params.SetIdempotencyKey(once.ProviderKeyFrom(ctx))
	_, err := charge.New(params)
	return err
}

// Ship keys by a name-based UUID of the order: the same input gives the same UUID.
func (s *Service) Ship(ctx context.Context, o Order) error {
	params := &stripe.ChargeParams{Amount: stripe.Int64(o.Amount)}
	params.SetIdempotencyKey(uuid.NewSHA1(uuid.NameSpaceOID, []byte(o.ID)).String())
	_, err := charge.New(params)
	return err
}

// Step keys through a helper of stable parts.
func (s *Service) Step(ctx context.Context, o Order) error {
	params := &stripe.ChargeParams{Amount: stripe.Int64(o.Amount)}
	params.SetIdempotencyKey(ids.OrderKey(o.ID, "capture"))
	_, err := charge.New(params)
	return err
}

// Fulfil hands the order to the partner under a fresh UUID: a retry after a timeout ships
// the order twice.
func (s *Service) Fulfil(ctx context.Context, o Order) error {
	return s.partner.Post(ctx, "/v1/orders", uuid.NewString(), []byte(o.ID)) // want `idempotency key passed to \(\*partner.Client\).Post comes from uuid.NewString`
}

// Replace names the replacement shipment by the time of the click.
func (s *Service) Replace(ctx context.Context, o Order) error {
	step := "replacement-" + time.Now().Format(time.RFC3339)
	return s.partner.Ship(ctx, o.ID, step) // want `idempotency key passed to \(\*partner.Client\).Ship is derived from time.Now`
}

// FulfilFirst names the shipment by the order: the same on every retry.
func (s *Service) FulfilFirst(ctx context.Context, o Order) error {
	return s.partner.Ship(ctx, o.ID, "first")
}

// Bill sends the invoice for the period the caller names, which a scheduler passes as
// the start of the month: stable, as a parameter.
func (s *Service) Bill(ctx context.Context, o Order, period time.Time) error { // want Bill:"keyParam\\(period\\)"
	return s.Invoice(ctx, o.CustomerID, period)
}

// BillNow bills the period of the server's clock: a retry after the month turns bills
// the next month as well.
func (s *Service) BillNow(ctx context.Context, o Order) error {
	return s.Invoice(ctx, o.CustomerID, time.Now()) // want `idempotency key passed to \(\*payments.Service\).Invoice is derived from time.Now`
}

// Job is a row of the outbox. Its IdempotencyKey is the application's own field: where
// the key is kept, not where it is handed to the provider.
type Job struct {
	ID             string
	OrderID        string
	IdempotencyKey string
}

// Enqueue stores the job with a key made once, here; every attempt of the job reads it
// back from the row (RunJob): not reported.
func (s *Service) Enqueue(ctx context.Context, o Order) error {
	j := Job{ID: "charge-" + o.ID, OrderID: o.ID, IdempotencyKey: uuid.NewString()}
	_, err := s.db.Exec(ctx, `INSERT INTO jobs (id, order_id, idempotency_key) VALUES ($1, $2, $3)`, j.ID, j.OrderID, j.IdempotencyKey)
	return err
}

// RunJob charges with the key the job's row holds.
func (s *Service) RunJob(ctx context.Context, j Job, o Order) error {
	params := &stripe.ChargeParams{Amount: stripe.Int64(o.Amount)}
	params.SetIdempotencyKey(j.IdempotencyKey)
	_, err := charge.New(params)
	return err
}

// ChargeNow makes a job and charges with its key at once, never storing it: the key is
// new on every retry, and is reported where it reaches the provider.
func (s *Service) ChargeNow(ctx context.Context, o Order) error {
	var j Job
	j.IdempotencyKey = uuid.NewString()
	params := &stripe.ChargeParams{Amount: stripe.Int64(o.Amount)}
	params.SetIdempotencyKey(j.IdempotencyKey) // want `idempotency key comes from uuid.NewString`
	_, err := charge.New(params)
	return err
}
