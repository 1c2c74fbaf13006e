// Package billing takes payments for orders.
package billing

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"

	"github.com/google/uuid"
	stripe "github.com/stripe/stripe-go/v82"
	"github.com/stripe/stripe-go/v82/charge"

	once "github.com/oncekit/once/runtime"
)

type Order struct {
	ID         string
	CustomerID string
	ChargeID   string
	Amount     int64
}

type Store interface {
	Order(ctx context.Context, id string) (Order, error)
}

type Server struct {
	stripe *stripe.Client
	orders Store
	db     once.DB
}

func (s *Server) Routes(mux *http.ServeMux) {
	mux.HandleFunc("POST /orders/{id}/refund", s.handleRefund)
	mux.HandleFunc("POST /orders/{id}/refund-keyed", s.handleRefundKeyed)
	mux.HandleFunc("POST /orders/{id}/pay", s.handlePay)
	mux.HandleFunc("POST /orders/{id}/pay-later", s.handlePayLater)
}

// handleRefund refunds an order's charge. A client that retries after a timeout refunds
// it a second time.
func (s *Server) handleRefund(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	order, err := s.orders.Order(ctx, r.PathValue("id"))
	if err != nil {
		http.Error(w, err.Error(), http.StatusNotFound)
		return
	}
	refund, err := s.stripe.V1Refunds.Create(ctx, &stripe.RefundCreateParams{ // want `call to \(\*stripe.Client\).V1Refunds.Create has no idempotency key and no //once: promise: a retry refunds the payment again`
		Charge: stripe.String(order.ChargeID),
	})
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	json.NewEncoder(w).Encode(refund)
}

// handleRefundKeyed passes a key derived from the order: Stripe answers a retry with the
// first refund.
func (s *Server) handleRefundKeyed(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	order, err := s.orders.Order(ctx, r.PathValue("id"))
	if err != nil {
		http.Error(w, err.Error(), http.StatusNotFound)
		return
	}
	params := &stripe.RefundCreateParams{Charge: stripe.String(order.ChargeID)}
	params.SetIdempotencyKey("refund-" + order.ID)
	if _, err := s.stripe.V1Refunds.Create(ctx, params); err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
	}
}

// handlePay charges through chargeOrder, which holds the promise.
func (s *Server) handlePay(w http.ResponseWriter, r *http.Request) {
	order, err := s.orders.Order(r.Context(), r.PathValue("id"))
	if err != nil {
		http.Error(w, err.Error(), http.StatusNotFound)
		return
	}
	if _, err := s.chargeOrderOnce(r.Context(), s.db, order); err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
	}
}

// chargeOrder charges the order's customer once for ever.
//
//once:forever key=order.ID
func (s *Server) chargeOrder(ctx context.Context, order Order) error {
	return s.createCharge(order)
}

// createCharge is called only under chargeOrder's promise.
func (s *Server) createCharge(order Order) error {
	_, err := charge.New(&stripe.ChargeParams{
		Amount:   stripe.Int64(order.Amount),
		Currency: stripe.String("eur"),
		Customer: stripe.String(order.CustomerID),
	})
	return err
}

// handlePayLater runs the charge inside a runtime guard's closure.
func (s *Server) handlePayLater(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	order, err := s.orders.Order(ctx, r.PathValue("id"))
	if err != nil {
		http.Error(w, err.Error(), http.StatusNotFound)
		return
	}
	guard := once.Forever[string]{Name: "billing.payLater"}
	id, _, err := guard.Do(ctx, s.db, order.ID, func(ctx context.Context) (string, error) {
		c, err := s.stripe.V1Charges.Create(ctx, &stripe.ChargeCreateParams{Amount: stripe.Int64(order.Amount)})
		if err != nil {
			return "", err
		}
		return c.ID, nil
	})
	if err != nil {
		http.Error(w, err.Error(), http.StatusBadGateway)
		return
	}
	fmt.Fprintln(w, id)
}

// ChargeOverdue is exported and called by nothing in the module: an entry point (an
// SDK-style wrapper), judged where it is defined.
func ChargeOverdue(ctx context.Context, order Order) (string, error) {
	c, err := charge.New(&stripe.ChargeParams{Amount: stripe.Int64(order.Amount), Customer: stripe.String(order.CustomerID)}) // want `call to charge.New has no idempotency key and no //once: promise: a retry charges the card again; set IdempotencyKey \(or call SetIdempotencyKey\) from a stable id, or declare a promise on ChargeOverdue`
	if err != nil {
		return "", err
	}
	return c.ID, nil
}

// chargeFromParams gets its params from the caller, which may have set the key: not
// reported.
func chargeFromParams(params *stripe.ChargeParams) error {
	_, err := charge.New(params)
	return err
}

// retryCapture is a tool an operator runs by hand against the sandbox.
func retryCapture(ctx context.Context, c *stripe.Client, amount int64) error {
	//oncelint:ignore ONCE001 sandbox account, run by hand, duplicates are harmless
	_, err := c.V1Charges.Create(ctx, &stripe.ChargeCreateParams{Amount: stripe.Int64(amount)})
	return err
}

// lookup reads only.
func lookup(ctx context.Context, c *stripe.Client, id string) error {
	//oncelint:ignore ONCE001 kept from when this created charges // want `this //oncelint:ignore ONCE001 silences no ONCE001 finding: remove it`
	_, err := c.V1Charges.Retrieve(ctx, id, nil)
	return err
}

// seedSandbox fills the sandbox account with test charges.
//
//oncelint:ignore ONCE001 sandbox fixtures: duplicates are wanted, and nothing is billed
func seedSandbox(ctx context.Context, c *stripe.Client) error {
	for _, amount := range []int64{100, 200, 300} {
		if _, err := c.V1Charges.Create(ctx, &stripe.ChargeCreateParams{Amount: stripe.Int64(amount)}); err != nil {
			return err
		}
	}
	return nil
}

// chargeLegacy charges through a per-account client of stripe-go's older API, whose
// methods have value receivers: reported as charge.New is.
func chargeLegacy(sc *charge.Client, order Order) error {
	_, err := sc.New(&stripe.ChargeParams{Amount: stripe.Int64(order.Amount)}) // want `call to \(charge.Client\).New has no idempotency key and no //once: promise: a retry charges the card again`
	return err
}

// refundWithKey hands its params to a helper that sets the key: not reported.
func (s *Server) refundWithKey(ctx context.Context, order Order) error {
	params := &stripe.RefundCreateParams{Charge: stripe.String(order.ChargeID)}
	withOrderKey(params, order)
	_, err := s.stripe.V1Refunds.Create(ctx, params)
	return err
}

func withOrderKey(p *stripe.RefundCreateParams, o Order) { p.SetIdempotencyKey("refund-" + o.ID) }

// refundByHand is run by an operator who decides each refund as it is made.
func refundByHand(ctx context.Context, c *stripe.Client, id string) error {
	_, err := c.V1Refunds.Create(ctx, &stripe.RefundCreateParams{Charge: stripe.String(id)}) //oncelint:ignore ONCE001 the operator confirms each refund
	return err
}

// compensate refunds and charges again from an operator's console: each run is a new
// decision, so neither a key nor a promise applies. One ignore names both codes.
//
//oncelint:ignore ONCE001,ONCE002 an operator's console: each run is a new decision
func compensate(ctx context.Context, c *stripe.Client, id string, amount int64) error {
	params := &stripe.RefundCreateParams{Charge: stripe.String(id)}
	params.SetIdempotencyKey(uuid.NewString())
	if _, err := c.V1Refunds.Create(ctx, params); err != nil {
		return err
	}
	_, err := c.V1Charges.Create(ctx, &stripe.ChargeCreateParams{Amount: stripe.Int64(amount)})
	return err
}

// rechargeByHand names a check that finds nothing here: ONCE002's half of the ignore is
// reported as unused, ONCE001's silences the charge.
//
//oncelint:ignore ONCE001,ONCE002 an operator's console // want `this //oncelint:ignore ONCE002 silences no ONCE002 finding: remove it`
func rechargeByHand(ctx context.Context, c *stripe.Client, amount int64) error {
	_, err := c.V1Charges.Create(ctx, &stripe.ChargeCreateParams{Amount: stripe.Int64(amount)})
	return err
}
