// Package modelcalls creates catalogue items and asks models through langchaingo.
package modelcalls

import (
	"context"

	stripe "github.com/stripe/stripe-go/v82"
	"github.com/stripe/stripe-go/v82/price"
	"github.com/stripe/stripe-go/v82/product"
	"github.com/tmc/langchaingo/llms"
)

// Publish creates a product and its price: one decision taken without a promise, one
// finding, which names the second call (a promise on Publish covers both).
func Publish(name string, amount int64) error {
	p, err := product.New(&stripe.ProductParams{Name: stripe.String(name)}) // want `call to product.New has no idempotency key and no //once: promise: a retry creates the product again; set IdempotencyKey \(or call SetIdempotencyKey\) from a stable id, or declare a promise on Publish; Publish also calls price.New with no promise, which the same promise covers`
	if err != nil {
		return err
	}
	_, err = price.New(&stripe.PriceParams{Product: stripe.String(p.ID), UnitAmount: stripe.Int64(amount)})
	return err
}

// Reprice adds a price to a product: its own finding.
func Reprice(productID string, amount int64) error {
	_, err := price.New(&stripe.PriceParams{Product: stripe.String(productID), UnitAmount: stripe.Int64(amount)}) // want `call to price.New has no idempotency key and no //once: promise: a retry creates the price again; set IdempotencyKey \(or call SetIdempotencyKey\) from a stable id, or declare a promise on Reprice \(ONCE001\)$`
	return err
}

// Lookup reads a product: no effect.
func Lookup(id string) error {
	_, err := product.Get(id, nil)
	return err
}

// Summarise asks a model through langchaingo's helper.
func Summarise(ctx context.Context, m llms.Model, text string) error {
	_, err := llms.GenerateFromSinglePrompt(ctx, m, "Summarise: "+text) // want `call to llms.GenerateFromSinglePrompt has no //once: promise and the provider takes no idempotency key: a retry runs \(and bills\) the model call again`
	return err
}

// Outline asks the model directly.
func Outline(ctx context.Context, m llms.Model) error {
	_, err := m.GenerateContent(ctx, []llms.MessageContent{{Role: "user"}}) // want `call to \(llms.Model\).GenerateContent has no //once: promise`
	return err
}

// Title asks the model for a single completion.
func Title(ctx context.Context, m llms.Model, text string) error {
	_, err := m.Call(ctx, text, llms.WithTemperature(0)) // want `call to \(llms.Model\).Call has no //once: promise`
	return err
}

// Transcribe asks the model in one of three modes: one decision without a promise, one
// finding, the other two calls named in it.
func Transcribe(ctx context.Context, m llms.Model, mode, text string) error {
	var err error
	switch mode {
	case "page":
		_, err = m.Call(ctx, "page: "+text) // want `call to \(llms.Model\).Call has no //once: promise and the provider takes no idempotency key: a retry runs \(and bills\) the model call again; declare a promise on Transcribe`
	case "pdf":
		_, err = m.Call(ctx, "pdf: "+text)
	default:
		_, err = m.Call(ctx, text)
	}
	return err
}

// RegenerateSummary asks for the summary again, on purpose: a request to redo asks for
// the repeat, so it is not reported.
func RegenerateSummary(ctx context.Context, m llms.Model, text string) error {
	_, err := llms.GenerateFromSinglePrompt(ctx, m, "Summarise again: "+text)
	return err
}

// RetryPublish makes a price again after a failure: a retry is no redo, and is reported.
func RetryPublish(productID string, amount int64) error {
	_, err := price.New(&stripe.PriceParams{Product: stripe.String(productID), UnitAmount: stripe.Int64(amount)}) // want `call to price.New has no idempotency key and no //once: promise: a retry creates the price again; set IdempotencyKey \(or call SetIdempotencyKey\) from a stable id, or declare a promise on RetryPublish \(ONCE001\)$`
	return err
}

// reChargeCard names money: never a redo by design, reported.
func reChargeCard(productID string, amount int64) error {
	_, err := price.New(&stripe.PriceParams{Product: stripe.String(productID), UnitAmount: stripe.Int64(amount)}) // want `declare a promise on reChargeCard \(ONCE001\)$`
	return err
}
