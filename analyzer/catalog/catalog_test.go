package catalog_test

import (
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/oncekit/once/analyzer/catalog"
)

func TestDefault_CoversTheProvidersOfTheIssue(t *testing.T) {
	t.Parallel()
	c, err := catalog.Default()
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{
		"github.com/stripe/stripe-go/v82/charge.New",
		"github.com/stripe/stripe-go/v82/paymentintent.New",
		"github.com/stripe/stripe-go/v82/customer.New",
		"github.com/stripe/stripe-go/v82/refund.New",
		"github.com/stripe/stripe-go/v82/invoiceitem.New",
		"github.com/stripe/stripe-go/v82/transfer.New",
		"github.com/stripe/stripe-go/v76/usagerecord.New",
		"github.com/stripe/stripe-go/v82/product.New",
		"github.com/stripe/stripe-go/v82/price.New",
		"github.com/tmc/langchaingo/llms.GenerateFromSinglePrompt",
		"(github.com/tmc/langchaingo/llms.Model).GenerateContent",
		"(github.com/stripe/stripe-go/v82.v1RefundService).Create",
		"net/smtp.SendMail",
		"(*github.com/aws/aws-sdk-go-v2/service/ses.Client).SendEmail",
		"(*github.com/aws/aws-sdk-go-v2/service/sesv2.Client).SendEmail",
		"(*github.com/aws/aws-sdk-go-v2/service/sns.Client).Publish",
		"(*github.com/sendgrid/sendgrid-go.Client).Send",
		"(github.com/resend/resend-go/v2.EmailsSvc).Send",
		"(*github.com/mrz1836/postmark.Client).SendEmail",
		"(*github.com/twilio/twilio-go/rest/api/v2010.ApiService).CreateMessage",
		"(*github.com/openai/openai-go.ChatCompletionService).New",
		"(*github.com/openai/openai-go/v3.ChatCompletionService).New",
		"(*github.com/sashabaranov/go-openai.Client).CreateChatCompletion",
		"(*github.com/anthropics/anthropic-sdk-go.MessageService).New",
		"net/http.Post",
		"(*net/http.Client).Post",
		"(*net/http.Client).Do",
		// The old-style clients' methods have value receivers, which FullName prints
		// without a star; a star written by mistake matches too.
		"(github.com/stripe/stripe-go/v82/charge.Client).New",
		"(*github.com/stripe/stripe-go/v82/charge.Client).New",
		"(github.com/stripe/stripe-go/v82/paymentintent.Client).Confirm",
	} {
		if _, ok := c.Effect(name); !ok {
			t.Errorf("no effect entry matches %s", name)
		}
	}
	for _, name := range []string{"(*net/http.Client).Get", "github.com/stripe/stripe-go/v82/charge.Get", "fmt.Println", "github.com/stripe/stripe-go/v82/checkout/session.New"} {
		if e, ok := c.Effect(name); ok {
			t.Errorf("%s is catalogued as an effect (%s) but reads only", name, e.Effect)
		}
	}
	// Reads: token endpoints by URL and path, token requests by their grant type, checks
	// by name.
	if !c.ReadURL([]string{"https://oauth2.googleapis.com/token"}, true) || !c.ReadURL([]string{"", "/oauth/token?x=1"}, false) ||
		c.ReadURL([]string{"https://api.example.com/v1/charges"}, true) {
		t.Error("ReadURL does not tell a token endpoint from a charge")
	}
	if !c.ReadMarker("grant_type") || !c.ReadMarker("grant_type=client_credentials&x") || c.ReadMarker("granted") {
		t.Error("ReadMarker does not tell grant_type")
	}
	for name, want := range map[string]bool{"createCustomer": true, "notifyListmonkFailure": true, "capturePayment": true, "doListActionZoho": false, "getUser": false} {
		if catalog.WriteName(name) != want {
			t.Errorf("WriteName(%q) = %v, want %v", name, !want, want)
		}
	}
	for name, want := range map[string]bool{
		"reOCRPageHandler": true, "ReSendPasscode": true, "resendInvite": true, "RegenerateAnswer": true,
		"retryPayment": false, "reCharge": false, "reOrder": false, "reprocessPayment": false, "Refund": false, "Register": false, "Renew": false, "resend": true, "re": false, "reply": false,
	} {
		if catalog.RedoName(name) != want {
			t.Errorf("RedoName(%q) = %v, want %v", name, !want, want)
		}
	}
	if !c.CheckName("verifyCaptcha") || !c.CheckName("VerifyOTP") || !c.CheckName("validate") || c.CheckName("verifier") || c.CheckName("sendVerify") {
		t.Error("CheckName does not tell a check's name")
	}
	// Reads by name (a first word) and by purpose (a word anywhere), unless the name
	// also says it writes.
	for name, want := range map[string]bool{
		"getDepartments": true, "GetFormData": true, "listUsers": true, "callProviderLogoutURL": true,
		"revokeToken": true, "getOrCreateCustomer": false, "fetchAndSendDigest": false, "logouts": false,
		"getter": false, "postOrder": false, "QueryVector": false,
		"listmonkUnsubscribe": true, "UnsubscribeMail": true, "subscribe": false, "unsubscribers": false,
	} {
		if c.CheckName(name) != want {
			t.Errorf("CheckName(%q) = %v, want %v", name, !want, want)
		}
	}
	if got := catalog.NameWords("callProviderLogoutURL_v2"); !slices.Equal(got, []string{"call", "provider", "logout", "url", "v", "2"}) {
		t.Errorf("NameWords = %q", got)
	}
	if !c.IsRead("(*golang.org/x/oauth2.Config).Exchange") {
		t.Error("the OAuth code exchange is not a read")
	}
	if !c.IsUnstable("time.Now", "time") || !c.IsUnstable("math/rand.Intn", "math/rand") || !c.IsUnstable("github.com/google/uuid.NewString", "github.com/google/uuid") {
		t.Error("time.Now, math/rand.Intn or uuid.NewString is not unstable")
	}
	if c.IsUnstable("time.Date", "time") || c.IsUnstable("github.com/google/uuid.Parse", "github.com/google/uuid") {
		t.Error("time.Date or uuid.Parse is unstable, but returns the same value for the same input")
	}
	// A package path with a dot in its last element: the fast path must know the package.
	if !c.HasUnstable("github.com/satori/go.uuid") || c.HasUnstable("github.com/satori/go") {
		t.Error("HasUnstable does not name github.com/satori/go.uuid by its whole path")
	}
	if !c.HasEffects("github.com/stripe/stripe-go/v82/charge") || !c.HasEffects("net/smtp") {
		t.Error("HasEffects misses charge or net/smtp")
	}
	// The SDKs' own types carry their keys: stripe.Params lives beside the effects' packages.
	for path, want := range map[string]bool{
		"github.com/stripe/stripe-go/v82":                  true,
		"github.com/aws/aws-sdk-go-v2/service/sesv2/types": true,
		"example.com/shop/outbox":                          false,
		"github.com/acme/stripe-go/v82":                    false,
	} {
		if got := c.FromProvider(path); got != want {
			t.Errorf("FromProvider(%s) = %v, want %v", path, got, want)
		}
	}
}

func TestNormalize_DropsMajorVersionsAndReceiverStars(t *testing.T) {
	t.Parallel()
	cases := map[string]string{
		"github.com/stripe/stripe-go/v82/charge.New":                 "github.com/stripe/stripe-go/charge.New",
		"(github.com/stripe/stripe-go/v82.v1RefundService).Create":   "(github.com/stripe/stripe-go.v1RefundService).Create",
		"github.com/resend/resend-go/v2":                             "github.com/resend/resend-go",
		"(*github.com/twilio/twilio-go/rest/api/v2010.ApiService).X": "(github.com/twilio/twilio-go/rest/api.ApiService).X",
		"github.com/a/b/v2/v3/c.F":                                   "github.com/a/b/c.F",
		"github.com/vango/vlib.F":                                    "github.com/vango/vlib.F",
		"(*github.com/stripe/stripe-go/v82/charge.Client).New":       "(github.com/stripe/stripe-go/charge.Client).New",
		"(*net/http.Client).Do":                                      "(net/http.Client).Do",
	}
	for in, want := range cases {
		if got := catalog.Normalize(in); got != want {
			t.Errorf("Normalize(%q) = %q, want %q", in, got, want)
		}
	}
}

func TestLoad_ExtendsFromAFileRelativeToTheRoot(t *testing.T) {
	t.Parallel()
	dir := t.TempDir()
	extra := `{"effects": [{"func": "(*example.com/billing/ledger.Client).Post", "effect": "posts the ledger entry", "class": "payment",
	  "key": {"arg": 1, "field": "RequestID"}}], "unstable": [{"func": "example.com/ids.Fresh"}]}`
	if err := os.WriteFile(filepath.Join(dir, "effects.json"), []byte(extra), 0o644); err != nil {
		t.Fatal(err)
	}
	c, err := catalog.Load(dir, "effects.json")
	if err != nil {
		t.Fatal(err)
	}
	e, ok := c.Effect("(*example.com/billing/ledger.Client).Post")
	if !ok || e.Key == nil || e.Key.Field != "RequestID" {
		t.Fatalf("extra entry not loaded: %+v", e)
	}
	if !c.IsUnstable("example.com/ids.Fresh", "example.com/ids") {
		t.Error("extra unstable entry not loaded")
	}
	if _, ok := c.Effect("net/smtp.SendMail"); !ok {
		t.Error("built-in entries lost when extending")
	}
	def, _ := catalog.Default()
	if _, ok := def.Effect("(*example.com/billing/ledger.Client).Post"); ok {
		t.Error("extending changed the built-in catalogue")
	}
}

func TestLoad_RejectsBadEntriesByName(t *testing.T) {
	t.Parallel()
	cases := map[string]string{
		`{"effects": [{"func": "SendMail", "effect": "sends", "class": "email"}]}`:             "not a full function name",
		`{"effects": [{"func": "a/b.F", "effect": "sends", "class": "mail"}]}`:                 `class "mail"`,
		`{"effects": [{"func": "a/b.F", "effect": "", "class": "email"}]}`:                     "effect is empty",
		`{"effects": [{"func": "a/b.F", "effect": "x", "class": "email", "key": {"arg": 0}}]}`: "key names no field",
		`{"effect": []}`: `unknown field "effect"`,
	}
	for body, want := range cases {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "c.json"), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := catalog.Load(dir, "c.json")
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Load(%s) error = %v, want one containing %q", body, err, want)
		}
	}
	if _, err := catalog.Load(t.TempDir(), "missing.json"); err == nil {
		t.Error("Load of a missing file succeeded")
	}
}
