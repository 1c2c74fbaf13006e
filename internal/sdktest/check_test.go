package sdktest_test

import (
	"strings"
	"testing"

	"github.com/oncekit/once/analyzer/catalog"
)

// The check fails an entry whose name, major version, argument, key field, setter, header
// or request is wrong, and passes the same entries written right: without the failing
// rows, a catalogue test that passes could be one that checks nothing.
func TestCheck_FailsWrongEntries(t *testing.T) {
	loaded := loadSDKs(t)
	const (
		charge  = "github.com/stripe/stripe-go/v85/charge"
		openai  = "(*github.com/openai/openai-go/v3.ChatCompletionService).New"
		model   = "(github.com/tmc/langchaingo/llms.Model)"
		retryDo = "(*github.com/hashicorp/go-retryablehttp.Client).Do"
	)
	stripeKey := func(arg int, field, setter string) *catalog.Key {
		return &catalog.Key{Arg: arg, Field: field, Setter: setter}
	}
	header := &catalog.Key{Header: "Idempotency-Key"}
	arg := func(i int) *int { return &i }
	cases := []struct {
		name    string
		entry   entry
		wantErr string // "" when the entry is right
	}{
		{"right function and key", entry{Func: charge + ".New", Key: stripeKey(0, "IdempotencyKey", "SetIdempotencyKey")}, ""},
		{"right method and key", entry{Func: "(" + charge + ".Client).Capture", Key: stripeKey(1, "IdempotencyKey", "SetIdempotencyKey")}, ""},
		{"misspelt function", entry{Func: charge + ".Nwe"}, "has no function Nwe"},
		{"misspelt method", entry{Func: "(" + charge + ".Client).Nwe"}, "has no method Nwe"},
		{"misspelt type", entry{Func: "(" + charge + ".Clinet).New"}, "has no type Clinet"},
		{"major version not imported", entry{Func: "github.com/stripe/stripe-go/v84/charge.New"}, "github.com/stripe/stripe-go/v84/charge is not imported"},
		{"package gone from the major named", entry{Func: "github.com/stripe/stripe-go/v85/usagerecord.New"}, "is not imported"},
		{"wildcard of a package not imported", entry{Func: "github.com/gofrs/uuid/v9.*"}, "is not imported"},
		{"key argument index off by one", entry{Func: charge + ".Capture", Key: stripeKey(0, "IdempotencyKey", "")}, "argument 0 (string) has no field IdempotencyKey"},
		{"key argument past the last", entry{Func: charge + ".New", Key: stripeKey(1, "IdempotencyKey", "")}, "no argument 1"},
		{"misspelt key field", entry{Func: charge + ".New", Key: stripeKey(0, "IdempotencyKy", "")}, "has no field IdempotencyKy"},
		{"misspelt key setter", entry{Func: charge + ".New", Key: stripeKey(0, "", "SetIdempotency")}, "has no method SetIdempotency"},
		{"key argument index one short", entry{Func: "(github.com/resend/resend-go/v3.EmailsSvc).SendWithOptions", Key: stripeKey(1, "IdempotencyKey", "")}, "has no field IdempotencyKey"},
		{"interface method", entry{Func: model + ".GenerateContent"}, ""},
		{"misspelt interface method", entry{Func: model + ".Generate"}, "has no method Generate"},
		{"header through request options", entry{Func: openai, Key: header}, ""},
		{"header on a call without request options", entry{Func: "(*github.com/sashabaranov/go-openai.Client).CreateChatCompletion", Key: header}, "takes no request options"},
		{"header on variadic arguments that are no options", entry{Func: "(*gopkg.in/gomail.v2.Dialer).DialAndSend", Key: header}, "the options are *gopkg.in/gomail.v2.Message"},
		{"request embedding *http.Request", entry{Func: retryDo, Request: &request{Arg: 0}}, ""},
		{"request that is a URL", entry{Func: "(*net/http.Client).Get", Request: &request{Arg: 0}}, "argument 0 is string"},
		{"request argument past the last", entry{Func: "(*net/http.Client).Do", Request: &request{Arg: 1}}, "no argument 1"},
		{"URL argument", entry{Func: "net/http.Post", URL: arg(0)}, ""},
		{"URL argument that is a request", entry{Func: "(*net/http.Client).Do", URL: arg(0)}, "not a string"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := check(c.entry, loaded)
			switch {
			case c.wantErr == "" && err != nil:
				t.Errorf("%s: %v", c.entry.Func, err)
			case c.wantErr != "" && err == nil:
				t.Errorf("%s passed, want an error containing %q", c.entry.Func, c.wantErr)
			case c.wantErr != "" && !strings.Contains(err.Error(), c.wantErr):
				t.Errorf("%s: %v, want an error containing %q", c.entry.Func, err, c.wantErr)
			}
		})
	}
}
