package outreach

import (
	"context"
	"errors"
	"fmt"
	"net/url"
	"time"

	"github.com/jackc/pgx/v5"
)

// Subscription is the app's copy of a user's subscription at the billing provider.
type Subscription struct {
	UserID     int64     `json:"user_id"`
	CustomerID string    `json:"customer_id"`
	Plan       string    `json:"plan"`
	Status     string    `json:"status"`
	UpdatedAt  time.Time `json:"updated_at"`
}

// CustomerState is what the billing API answers for GET /v1/customers/{id}: the truth the
// app copies.
type CustomerState struct {
	Customer  string    `json:"customer"`
	Plan      string    `json:"plan"`
	Status    string    `json:"status"`
	UpdatedAt time.Time `json:"updated_at"`
}

// BillingEvents are the webhook events the app subscribes to. The app takes one thing from
// any of them, the customer it concerns: the handler ignores the rest of the payload and
// reads that customer's state from the billing API.
var BillingEvents = []string{
	"checkout.session.completed",
	"customer.subscription.created",
	"customer.subscription.updated",
	"customer.subscription.deleted",
	"customer.subscription.paused",
	"customer.subscription.resumed",
	"invoice.paid",
	"invoice.payment_failed",
	"subscription_schedule.updated",
	"subscription_schedule.released",
	"subscription_schedule.canceled",
	"customer.deleted",
}

// SyncCustomer copies a customer's subscription from the billing API. It is the whole of
// the webhook's work, and it needs no record of processed events: a duplicate delivery,
// an out-of-order one, an event nobody asked for are all one more read of the truth. The
// lock per customer makes the read and the write one unit, so of two deliveries the one
// that writes last has also read last.
//
//once:transaction key=customerID name=outreach.billing-customer
func (a *App) SyncCustomer(ctx context.Context, tx pgx.Tx, customerID string) (Subscription, error) {
	a.Stats.TruthReads.Add(1)
	var st CustomerState
	found, err := a.billing.get(ctx, "/v1/customers/"+url.PathEscape(customerID), &st)
	if err != nil {
		return Subscription{}, fmt.Errorf("reading customer %s: %w", customerID, err)
	}
	if !found {
		// Deleted at the provider: keep the row (its conversations refer to the user) on
		// the free plan.
		st = CustomerState{Customer: customerID, Plan: "free", Status: "deleted", UpdatedAt: a.now()}
	}
	sub := Subscription{CustomerID: customerID, Plan: st.Plan, Status: st.Status, UpdatedAt: st.UpdatedAt}
	err = tx.QueryRow(ctx, `UPDATE subscriptions SET plan = $2, status = $3, updated_at = $4
		WHERE customer_id = $1 RETURNING user_id`, customerID, st.Plan, st.Status, st.UpdatedAt).Scan(&sub.UserID)
	if errors.Is(err, pgx.ErrNoRows) {
		return Subscription{}, nil // a customer of another app on the same account: not ours
	}
	if err != nil {
		return Subscription{}, fmt.Errorf("writing customer %s's subscription: %w", customerID, err)
	}
	return sub, nil
}

// RequestPlanChange asks the billing provider to move a subscription to another plan. The
// key is derived from the subscription row, including its updated-at, deliberately: it is
// the same for every click made while the subscription is in one state (a double click
// changes the plan once), and new once the change has come back through the webhook and
// the subscription has moved on, so the next change is a new request.
//
//once:provider key=sub.UserID,sub.UpdatedAt prefix=plan-change ttl=24h
func (a *App) RequestPlanChange(ctx context.Context, sub Subscription, plan string) (string, error) {
	r, err := a.billing.post(ctx, "/v1/subscriptions/"+url.PathEscape(sub.CustomerID), map[string]string{"plan": plan})
	return r.ID, err
}

// subscription reads the user's subscription.
func (a *App) subscription(ctx context.Context, userID int64) (Subscription, error) {
	sub := Subscription{UserID: userID}
	err := a.db.QueryRow(ctx, `SELECT customer_id, plan, status, updated_at FROM subscriptions WHERE user_id = $1`, userID).
		Scan(&sub.CustomerID, &sub.Plan, &sub.Status, &sub.UpdatedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return Subscription{}, ErrNotFound
	}
	if err != nil {
		return Subscription{}, fmt.Errorf("reading the subscription of user %d: %w", userID, err)
	}
	return sub, nil
}
