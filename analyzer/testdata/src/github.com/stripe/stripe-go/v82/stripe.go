// Package stripe is a stub of stripe-go v82 for oncelint's tests: the signatures oncelint
// reads, with no behaviour.
package stripe

import "context"

// Params is embedded in every XxxParams.
type Params struct {
	Context        context.Context   `form:"-"`
	Expand         []*string         `form:"expand"`
	Headers        map[string]string `form:"-"`
	IdempotencyKey *string           `form:"-"`
	Metadata       map[string]string `form:"metadata"`
	StripeAccount  *string           `form:"-"`
}

// SetIdempotencyKey sets a value for the Idempotency-Key header.
func (p *Params) SetIdempotencyKey(val string) { p.IdempotencyKey = &val }

// AddMetadata adds a new key-value pair to the Metadata.
func (p *Params) AddMetadata(key, value string) {}

func String(v string) *string { return &v }
func Int64(v int64) *int64    { return &v }

type Charge struct {
	ID     string
	Amount int64
}
type ChargeParams struct {
	Params   `form:"*"`
	Amount   *int64
	Currency *string
	Customer *string
	Source   *PaymentSourceSourceParams
}
type PaymentSourceSourceParams struct{ Token *string }
type ChargeCreateParams struct {
	Params   `form:"*"`
	Amount   *int64
	Currency *string
	Customer *string
}
type ChargeRetrieveParams struct {
	Params `form:"*"`
}

type Refund struct{ ID string }
type RefundParams struct {
	Params        `form:"*"`
	Charge        *string
	PaymentIntent *string
	Amount        *int64
}
type RefundCreateParams struct {
	Params        `form:"*"`
	Amount        *int64
	Charge        *string
	PaymentIntent *string
	Reason        *string
}

type PaymentIntent struct{ ID string }
type PaymentIntentParams struct {
	Params   `form:"*"`
	Amount   *int64
	Currency *string
	Customer *string
}
type PaymentIntentCreateParams struct {
	Params   `form:"*"`
	Amount   *int64
	Currency *string
	Customer *string
}

type Customer struct{ ID string }
type CustomerParams struct {
	Params `form:"*"`
	Email  *string
}
type CustomerCreateParams struct {
	Params `form:"*"`
	Email  *string
}

type CheckoutSession struct {
	ID  string
	URL string
}
type CheckoutSessionParams struct {
	Params     `form:"*"`
	Customer   *string
	Mode       *string
	SuccessURL *string
}

type Subscription struct {
	ID        string
	Customer  *Customer
	Status    string
	UpdatedAt int64
}

type v1ChargeService struct{ Key string }

// Create a charge.
func (c v1ChargeService) Create(ctx context.Context, params *ChargeCreateParams) (*Charge, error) {
	return &Charge{}, nil
}

// Retrieve a charge.
func (c v1ChargeService) Retrieve(ctx context.Context, id string, params *ChargeRetrieveParams) (*Charge, error) {
	return &Charge{}, nil
}

type v1RefundService struct{ Key string }

// Create a refund.
func (c v1RefundService) Create(ctx context.Context, params *RefundCreateParams) (*Refund, error) {
	return &Refund{}, nil
}

type v1PaymentIntentService struct{ Key string }

// Create a payment intent.
func (c v1PaymentIntentService) Create(ctx context.Context, params *PaymentIntentCreateParams) (*PaymentIntent, error) {
	return &PaymentIntent{}, nil
}

type v1CustomerService struct{ Key string }

// Create a customer.
func (c v1CustomerService) Create(ctx context.Context, params *CustomerCreateParams) (*Customer, error) {
	return &Customer{}, nil
}

// Client is the Stripe client of v82.
type Client struct {
	V1Charges        *v1ChargeService
	V1Customers      *v1CustomerService
	V1PaymentIntents *v1PaymentIntentService
	V1Refunds        *v1RefundService
}

type ClientOption func(*Client)

func NewClient(key string, opts ...ClientOption) *Client { return &Client{} }

type Product struct{ ID string }
type ProductParams struct {
	Params `form:"*"`
	Name   *string
}
type Price struct{ ID string }
type PriceParams struct {
	Params     `form:"*"`
	Product    *string
	UnitAmount *int64
}
