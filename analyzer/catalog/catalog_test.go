package catalog_test

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/oncekit/once/analyzer/catalog"
)

func TestDefault_NamesEffectsTransportsAndRoots(t *testing.T) {
	t.Parallel()
	c, err := catalog.Default()
	if err != nil {
		t.Fatal(err)
	}
	for _, name := range []string{
		"github.com/stripe/stripe-go/v82/charge.New",
		"github.com/stripe/stripe-go/v76/usagerecord.New", // another major version
		"(github.com/stripe/stripe-go/v82.v1RefundService).Create",
		"(*github.com/stripe/stripe-go/v82/charge.Client).New", // a star written where the SDK has none
		"net/smtp.SendMail",
		"(*github.com/twilio/twilio-go/rest/api/v2010.ApiService).CreateMessage",
		"(*github.com/openai/openai-go/v3.ChatCompletionService).New",
		"(github.com/tmc/langchaingo/llms.Model).GenerateContent",
	} {
		if _, ok := c.Effect(name); !ok {
			t.Errorf("no effect entry matches %s", name)
		}
	}
	for _, name := range []string{"(*net/http.Client).Get", "(*net/http.Client).Do", "fmt.Println", "github.com/stripe/stripe-go/v82/checkout/session.New"} {
		if e, ok := c.Effect(name); ok {
			t.Errorf("%s is catalogued as an effect (%s)", name, e.Effect)
		}
	}
	if tr := c.Transport("(*net/http.Client).Do"); tr == nil || tr.Request == nil || *tr.Request != 0 {
		t.Errorf("(*http.Client).Do is not a transport of the request at argument 0: %+v", tr)
	}
	if tr := c.Transport("(*github.com/hashicorp/go-retryablehttp.Client).Do"); tr == nil || !tr.Retries {
		t.Error("go-retryablehttp's client does not retry")
	}
	if r := c.Request("net/http.NewRequestWithContext"); r == nil || r.Method != 1 || r.URL != 2 {
		t.Errorf("NewRequestWithContext: %+v", r)
	}
	if r := c.RootSignature("func(net/http.ResponseWriter, *net/http.Request)"); r == nil {
		t.Error("an HTTP handler's type is no root")
	}
	if r := c.RootFunc("(*github.com/robfig/cron/v3.Cron).AddFunc"); r == nil || r.Arg == nil || *r.Arg != 1 {
		t.Error("cron's AddFunc does not run its argument 1")
	}
	if r := c.Delivers("(*github.com/rabbitmq/amqp091-go.Channel).Consume"); r == nil || c.Delivers("(*github.com/rabbitmq/amqp091-go.Channel).Publish") != nil {
		t.Error("RabbitMQ's Consume hands over no deliveries, or Publish does")
	}
	if r := c.RootFunc("(go.temporal.io/sdk/worker.ActivityRegistry).RegisterActivity"); r == nil || r.Arg == nil || *r.Arg != 0 {
		t.Error("Temporal's RegisterActivity does not run its argument 0")
	}
	if c.Unstable("time.Now", "time") != "clock" || c.Unstable("math/rand.Intn", "math/rand") != "random" || c.Unstable("time.Date", "time") != "" {
		t.Error("time.Now is not the clock, math/rand.Intn not random, or time.Date unstable")
	}
	if !c.IsRead("(*golang.org/x/oauth2.Config).Exchange") || !c.ReadURL([]string{"https://www.google.com/recaptcha/api/siteverify"}, true) {
		t.Error("the OAuth code exchange or the captcha check is not a read")
	}
	if e := c.EndpointEffect([]string{"https://api.openai.com/v1/responses"}, true); e == nil || e.Class != "model" {
		t.Error("OpenAI's responses endpoint is no model call")
	}
	if e := c.EndpointEffect([]string{"https://api.openai.com/v1/responses"}, false); e != nil {
		t.Error("an endpoint matched a URL whose start is not known")
	}
}

// Two major versions with different signatures keep their own entries; a version the
// catalogue does not list takes the first listed.
func TestRetry_ExactMajorVersionFirst(t *testing.T) {
	t.Parallel()
	c, err := catalog.Default()
	if err != nil {
		t.Fatal(err)
	}
	v4, v5, v3 := c.Retry("github.com/cenkalti/backoff/v4.Retry"), c.Retry("github.com/cenkalti/backoff/v5.Retry"), c.Retry("github.com/cenkalti/backoff/v3.Retry")
	if v4 == nil || v5 == nil || v3 == nil || v4.Arg != 0 || v5.Arg != 1 || v3.Arg != 0 {
		t.Errorf("backoff.Retry: v4 %+v, v5 %+v, v3 %+v", v4, v5, v3)
	}
}

func TestNormalize_DropsMajorVersionsAndReceiverStars(t *testing.T) {
	t.Parallel()
	cases := map[string]string{
		"github.com/stripe/stripe-go/v82/charge.New":                 "github.com/stripe/stripe-go/charge.New",
		"(*github.com/twilio/twilio-go/rest/api/v2010.ApiService).X": "(github.com/twilio/twilio-go/rest/api.ApiService).X",
		"github.com/a/b/v2/v3/c.F":                                   "github.com/a/b/c.F",
		"github.com/vango/vlib.F":                                    "github.com/vango/vlib.F",
		"func(*github.com/gin-gonic/gin.Context)":                    "func(*github.com/gin-gonic/gin.Context)",
		"func(github.com/labstack/echo/v4.Context) error":            "func(github.com/labstack/echo.Context) error",
	}
	for in, want := range cases {
		if got := catalog.Normalize(in); got != want {
			t.Errorf("Normalize(%q) = %q, want %q", in, got, want)
		}
	}
}

// The module root's oncelint.json is the project's catalogue; -catalog files add to it.
func TestLoad_ReadsTheProjectsCatalogue(t *testing.T) {
	t.Parallel()
	root := t.TempDir()
	write := func(name, body string) {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(root, name)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(root, name), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	write("go.mod", "module example.com/app\n")
	write("oncelint.json", `{"effects": [{"func": "(*example.com/alerts.Client).Send", "effect": "sends the alert", "class": "message"}],
	  "roots": [{"func": "example.com/app/jobs.Run", "root": "the job runner: a failed job runs again"}]}`)
	write("more.json", `{"unstable": [{"func": "example.com/ids.Fresh", "source": "random"}]}`)
	write("pkg/sub/x.go", "package sub\n")
	c, err := catalog.Load(filepath.Join(root, "pkg", "sub"), "more.json")
	if err != nil {
		t.Fatal(err)
	}
	if e, ok := c.Effect("(*example.com/alerts.Client).Send"); !ok || e.Class != "message" {
		t.Error("the project's own client is not an effect")
	}
	if c.RootFunc("example.com/app/jobs.Run") == nil || c.Unstable("example.com/ids.Fresh", "example.com/ids") != "random" {
		t.Error("the project's root or the -catalog file's entry is missing")
	}
	if _, ok := c.Effect("net/smtp.SendMail"); !ok {
		t.Error("built-in entries lost when extending")
	}
	def, _ := catalog.Default()
	if _, ok := def.Effect("(*example.com/alerts.Client).Send"); ok {
		t.Error("extending changed the built-in catalogue")
	}
	if c.Hash == def.Hash {
		t.Error("the project's catalogue does not change the catalogue's hash")
	}
}

func TestLoad_RejectsBadEntriesByName(t *testing.T) {
	t.Parallel()
	cases := map[string]string{
		`{"effects": [{"func": "SendMail", "effect": "sends", "class": "email"}]}`:             "not a full function name",
		`{"effects": [{"func": "a/b.F", "effect": "sends", "class": "mail"}]}`:                 `class "mail"`,
		`{"effects": [{"func": "a/b.F", "effect": "", "class": "email"}]}`:                     "effect is empty",
		`{"effects": [{"func": "a/b.F", "effect": "x", "class": "email", "key": {"arg": 0}}]}`: "key names no field",
		`{"effects": [{"path": "v1/x", "effect": "x", "class": "email"}]}`:                     "path must start with /",
		`{"unstable": [{"func": "a/b.F", "source": "moon"}]}`:                                  `source "moon"`,
		`{"roots": [{"func": "a/b.F"}]}`:                                                       "root is empty",
		`{"effect": []}`:                                                                       `unknown field "effect"`,
	}
	for body, want := range cases {
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, "c.json"), []byte(body), 0o644); err != nil {
			t.Fatal(err)
		}
		_, err := catalog.Load(dir, filepath.Join(dir, "c.json"))
		if err == nil || !strings.Contains(err.Error(), want) {
			t.Errorf("Load(%s) error = %v, want one containing %q", body, err, want)
		}
	}
	if _, err := catalog.Load(t.TempDir(), "/nonexistent/missing.json"); err == nil {
		t.Error("Load of a missing file succeeded")
	}
}

// A root signature ending in ", ...)" names the leading parameters: a handler that also
// takes the app's own value, or returns an error, matches; one missing the request does not.
func TestRootSignature_LeadingParameters(t *testing.T) {
	t.Parallel()
	c, err := catalog.Default()
	if err != nil {
		t.Fatal(err)
	}
	for sig, want := range map[string]bool{
		"func(net/http.ResponseWriter, *net/http.Request)":                                 true,
		"func(net/http.ResponseWriter, *net/http.Request, *example.com/app.visitor) error": true,
		"func(net/http.ResponseWriter, *net/http.RequestBody)":                             false,
		"func(net/http.ResponseWriter, string)":                                            false,
		"func(*net/http.Request, net/http.ResponseWriter)":                                 false,
	} {
		if got := c.RootSignature(sig) != nil; got != want {
			t.Errorf("RootSignature(%q) found = %v, want %v", sig, got, want)
		}
	}
}
