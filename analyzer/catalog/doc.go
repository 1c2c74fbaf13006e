// Package catalog is oncelint's knowledge of libraries, as data keyed by identity: which
// functions and methods charge, email, message, push or call a paid model, which only
// read, which carry a request to the network, which retry, which return a value that
// differs on every call, and which frameworks call the application's code again.
//
// The built-in table is catalog.json, embedded. Functions are named by full identity as
// [go/types.Func.FullName] prints them, the form of errcheck's exclude lists:
// "github.com/stripe/stripe-go/v82/charge.New", "(*net/http.Client).Do",
// "(github.com/resend/resend-go/v2.EmailsSvc).SendWithOptions". Endpoints are named by
// URL. Nothing is guessed from a name: what the table does not name, and no declaration
// of the user names, is not an effect.
//
// # Format
//
// A catalogue file is a JSON object of lists; every list is optional.
//
// "effects": one function or method, or one endpoint, each doing something a retry must
// not repeat:
//
//	{"func": "(github.com/stripe/stripe-go/v82.v1RefundService).Create",
//	 "effect": "refunds the payment", "class": "payment",
//	 "key": {"arg": 1, "field": "IdempotencyKey", "setter": "SetIdempotencyKey"}}
//	{"url": "https://api.openai.com/v1/responses", "effect": "calls the model", "class": "model"}
//
// effect completes "a retry ... again" in messages; class is one of payment, email,
// message, push, model, webhook and paid (another call the provider bills). An entry names a "func", or a "url" prefix, a URL
// "path" (matched against the end of a URL's constant part, for endpoints whose host is
// configured), or both url and path: a request with a state-changing method (POST,
// PATCH) sent there through a transport is the effect. key says how a call carries the
// provider's idempotency key, and is absent where the provider takes none:
//
//   - "arg" and "field" (and optionally "setter"): argument arg (counted from 0, the
//     receiver not counted) is a struct or a pointer to one whose field (at any depth of
//     embedding) holds the key, or whose setter method sets it;
//   - "header": a request header (Idempotency-Key) set by an option WithHeader(name,
//     value) among the call's arguments, or by Header.Set or Header.Add on the request a
//     transport sends; "headers" are other names the receiver reads the key under.
//
// "reads": a function, URL prefix or path that looks like an effect and changes nothing
// that lasts (an OAuth token exchange, a captcha verification), with "why".
//
// "transports": a function that sends a request to the network: {"func": "net/http.Post",
// "url": 0, "method": "POST"} takes its URL at argument 0 and always POSTs; {"func":
// "(*net/http.Client).Do", "request": 0} sends the request at argument 0, built by one of
// the "requests" ({"func": "net/http.NewRequest", "method": 0, "url": 1}). "retries":
// true marks a client that sends again by itself on failure. A send whose endpoint no
// effect or read names is counted in the run's coverage, grouped by the function that
// reached the transport, so that one catalogue line can classify it.
//
// "retries": a helper that runs a function again until it succeeds: {"func":
// "github.com/cenkalti/backoff/v4.Retry", "arg": 0}.
//
// "unstable": a function whose result differs on every call, with its "source", clock or
// random: {"func": "github.com/google/uuid.NewString", "source": "random"}. A name ending
// in ".*" covers every function and method of the package.
//
// "roots": code that a framework runs again, so that an effect reached from it repeats
// when its caller retries or redelivers ("root" says what it is):
//
//   - {"signature": "func(net/http.ResponseWriter, *net/http.Request)"}: every function,
//     method or function literal of that type (generic type arguments left out); ending in
//     ", ...)", the leading parameters only, whatever follows them and whatever the results;
//   - {"func": "(*github.com/robfig/cron/v3.Cron).AddFunc", "arg": 1}: a function value
//     passed there, or, when a value of another type is passed, each of its exported
//     methods (Temporal's activities registered as a struct); without "arg", the named
//     function itself (a project's own worker);
//   - {"embeds": "github.com/beego/beego/v2/server/web.Controller"}: the exported methods
//     of a type embedding that one, which the framework routes requests to;
//   - {"registrar": "google.golang.org/grpc.ServiceRegistrar"}: the methods of the value
//     passed after a parameter of that type (a generated RegisterFooServer);
//   - {"delivers": "(*github.com/rabbitmq/amqp091-go.Channel).Consume"}: a function that
//     hands its caller a message, or a channel of messages, that the broker delivers again
//     until it is acknowledged: what the caller does after the call, and what the function
//     literals it starts do, is done again.
//
// A loop that a timer turns (a wait on time.Tick, time.After, a Ticker's or a Timer's
// channel, or time.Sleep, in a loop that goes on until stopped rather than over a list or
// a count) is a root without an entry: a hand-written scheduler does again what failed, or
// was not recorded as done, at its next turn.
//
// # Versions
//
// Major-version path elements (/v2, /v82) are ignored when names are compared, so an entry
// written for stripe-go v82 also matches v81 and v83. So is a receiver's star: "(*pkg.T).M"
// and "(pkg.T).M" name one method.
//
// # A project's catalogue
//
// [Load] reads more files in the same format: oncelint.json at the module root, when
// there is one, and the files named by oncelint's -catalog flag. Their entries add to the
// built-in ones and replace an entry of the same name. A project names its own clients
// there, including one living in another module of the same repository:
//
//	{"effects": [{"func": "(*github.com/x/y.Client).Send", "effect": "sends the alert", "class": "message"}]}
package catalog
