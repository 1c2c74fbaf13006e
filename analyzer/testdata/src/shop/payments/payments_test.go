package payments

import (
	"context"
	"testing"

	"github.com/google/uuid"
	stripe "github.com/stripe/stripe-go/v82"
	"github.com/stripe/stripe-go/v82/charge"
)

// Against the provider's sandbox, each run charges under a fresh key so that runs do not
// replay each other: a test's key is not a retry's, and is not reported.
func TestCharge_Sandbox(t *testing.T) {
	params := &stripe.ChargeParams{Amount: stripe.Int64(100)}
	params.SetIdempotencyKey(uuid.NewString())
	if _, err := charge.New(params); err != nil {
		t.Fatal(err)
	}
	_ = context.Background()
}
