package once001_test

import (
	"path/filepath"
	"testing"

	"golang.org/x/tools/go/analysis/analysistest"

	"github.com/oncekit/once/analyzer/once001"
)

func testdata(t *testing.T) string {
	t.Helper()
	dir, err := filepath.Abs(filepath.Join("..", "testdata"))
	if err != nil {
		t.Fatal(err)
	}
	return dir
}

// Refunds, charges and checkout sessions through stripe-go's v82 client and its old
// package functions: unkeyed calls in handlers are reported; keyed ones, calls covered by
// a directive or a runtime guard, and exported helpers nobody here calls are not.
func TestONCE001_Stripe(t *testing.T) {
	t.Parallel()
	analysistest.Run(t, testdata(t), once001.Analyzer, "shop/billing")
}

// A webhook handler reaches SES through two packages: the effect travels up as a fact and
// is reported at the handler's call, while the handler that sends through a guard is not.
func TestONCE001_EffectTwoPackagesDown(t *testing.T) {
	t.Parallel()
	analysistest.Run(t, testdata(t), once001.Analyzer, "shop/mailer", "shop/notify", "shop/api")
}

// Email, SMS, model and HTTP providers, each with and without the key it takes.
func TestONCE001_Providers(t *testing.T) {
	t.Parallel()
	analysistest.Run(t, testdata(t), once001.Analyzer, "shop/outreach")
}
