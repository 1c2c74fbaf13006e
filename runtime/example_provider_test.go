package once_test

import (
	"context"
	"fmt"
	"time"

	once "github.com/oncekit/once/runtime"
)

// The charge for an answer carries an idempotency key derived from the answer's row, so a
// retry after a lost response is recognised by the payment provider and not charged again.
func ExampleProvider() {
	fee := once.Provider{Prefix: "fee", TTL: 24 * time.Hour}
	out, err := fee.Do(context.Background(), once.MustKey("reply", 1042), func(ctx context.Context) error {
		k, _ := once.ProviderKeyFrom(ctx)
		fmt.Println("Idempotency-Key:", k) // pass it to the provider's API
		return nil
	})
	fmt.Println(out.Status, out.ProviderKey, err)

	// Output:
	// Idempotency-Key: fee-reply/1042
	// ran fee-reply/1042 <nil>
}

func ExampleProviderKey() {
	fmt.Println(once.ProviderKey("answer", "6ba7b810-9dad-11d1-80b4-00c04fd430c8"))
	fmt.Println(once.ProviderKey("welcome", "zoë@example.com"))

	// Output:
	// answer-6ba7b810-9dad-11d1-80b4-00c04fd430c8
	// welcome-zo%C3%AB@example.com
}
