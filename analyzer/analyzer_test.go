package analyzer_test

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"golang.org/x/tools/go/analysis"
	"golang.org/x/tools/go/analysis/analysistest"

	"github.com/oncekit/once/analyzer"
)

// shop lists the testdata packages and what each shows. Every check runs over all of
// them, so each package's want comments are every finding oncelint makes there: a check
// that fires where another's cases live is caught as a false positive. (shop/declared,
// whose mistakes sit in comments where a want cannot go, is once000's own test.)
var shop = []string{
	// ONCE001: refunds, charges and checkout sessions through stripe-go's v82 client and
	// its old package functions; unkeyed calls in handlers are reported, keyed ones,
	// calls under a directive or a runtime guard, and exported helpers nobody here calls
	// are not. //oncelint:ignore above a statement, at its end, in a doc comment and with
	// two codes silences its findings; a code that silences nothing is reported.
	"shop/billing",
	// ONCE001: a webhook handler reaches SES through two packages; the effect travels up
	// as a fact and is reported at the handler's call, not at the guarded handler's.
	"shop/mailer", "shop/notify", "shop/api",
	// ONCE001: email, SMS, model and HTTP providers, each with and without its key.
	"shop/outreach",
	// ONCE001 through interfaces: an adapter reached only through its interface, every
	// call of which holds a promise, is not reported; an unguarded call of an interface
	// is reported where it is made, naming the effect an implementation performs.
	"shop/receipts",
	// ONCE002: keys from uuid, the clock, crypto/rand and a helper in another package are
	// reported; keys from ids, a row's UpdatedAt, a period parameter, a key persisted on
	// the row or scanned back from it, an outbox row's own key field, the provider
	// guard's key, a name-based UUID and a test's fresh key are not.
	"shop/ids", "shop/payments",
	// ONCE002: a helper sending its parameter on as the key (partner.Post, and Ship
	// through it) makes its callers' arguments keys, here and from another package;
	// random bytes read into a buffer (rand.Read of an array's slice, io.ReadFull from
	// rand.Reader) and then encoded are random keys.
	"shop/partner",
	// ONCE003: package-level maps, a sync.Map and a receiver's map field standing in for
	// a promise are reported; a set in front of a keyed call, a record written after the
	// effect, a batch-local set, a memo and a cache of the client the effect goes
	// through are not.
	"shop/alerts",
	// ONCE004: direct calls of a declared method, here and from another package (through
	// the guarded fact), are reported and rewritten to the wrapper with the DB in scope;
	// the wrapper's own call and the test's are not.
	"shop/welcome", "shop/signup",
	// ONCE005: counting open runs and then inserting is reported, also under FOR UPDATE
	// of the runs themselves; a parent row lock, an advisory lock, a serializable
	// transaction, a transaction promise and an ON CONFLICT insert are not. ONCE003: a
	// package-level map and a sync.Map field used as the lock around an insert (direct,
	// and through a helper) are reported; the same set in front of an ON CONFLICT claim,
	// a cache of rows the insert itself checks, and a map of times that throttles are
	// not.
	"shop/runs",
	// ONCE005 across helpers: a look-up (findByKey, store.FindAction) deciding an insert
	// made by another helper (create, store.CreateAction), in the package and through
	// facts, is reported; so is a read of the month's spend deciding an upsert that adds
	// to it with no WHERE. A claim by ON CONFLICT, a parent row lock taken by a helper, a
	// read that only supplies values, a look-up deciding an insert into another table, a
	// conditional upsert, an upsert that sets rather than adds, a counter nothing is
	// decided from, and a find-or-create that handles the unique violation (itself or
	// through a helper) are not.
	"shop/store", "shop/actions",
	// ONCE006: a request promise or guard around a paid model call, a charge or an email
	// (http.Post, called in the guard or through a helper) is reported, one around a
	// read is not; a table= insert without the declared clause is reported, one through
	// the generated constant is not.
	"shop/jobs",
	// ONCE001, the effect model: only a request that changes state is an effect, its
	// method traced through the request value (a reused variable, a Method set later, a
	// helper taking the method or the request); a GET, a token exchange and a captcha
	// check are not; a raw request's finding asks for the header on the request.
	"shop/webcalls", "shop/webusers",
	// ONCE001, where a finding goes: one report per root cause, at the function nearest
	// the effect above which no promise is held (eight unguarded calls of quota.NotifyOver
	// are one finding); a helper some callers guard is reported at the callers that do
	// not; an implementation reached only through an interface from another package and
	// a service method nothing in the module calls are judged where they are defined.
	"shop/quota", "shop/quotaapi", "shop/gateway", "shop/checkout", "shop/accounts",
	// ONCE001: the module's own mail service, called from two packages, is judged at
	// each caller's call (each decides what it sends), not at its definition.
	"shop/mailsvc",
	// The same for a method of the service, called through a field from files that do
	// not import its package (the field is declared in another file).
	"shop/notifier", "shop/tickets", "shop/digest",
	// ONCE001: adapters behind one interface, one of whose effects is reported further
	// down (a helper its other method shares): the interface's caller still reports the
	// adapter whose effect nothing below reports.
	"shop/paygw", "shop/orders",
	// ONCE001: two adapters of one interface (SMS providers) are judged at the
	// interface's caller in another package, once; a handler registered in a closure is
	// an entry point, judged where it is defined, not at the registration; a verification
	// and a token request (by its grant type) are reads.
	"shop/sms", "shop/phone",
	// ONCE001: Stripe's product and price creation and langchaingo's model calls.
	"shop/modelcalls",
	// ONCE002: a Standard Webhooks webhook-id made fresh on each attempt of a retry
	// loop is reported; one derived from the event's id is not, and neither request is
	// an unkeyed ONCE001.
	"shop/hooks",
	// ONCE001: a raw POST sent by a function named for a read (listTeams, GetMember) or
	// for ending a session or revoking a grant is no effect; one whose name also says it
	// creates (getOrCreateTeam), or names another purpose (inviteMember, announceLogouts),
	// is.
	"shop/readposts",
	// ONCE001: an email carrying a code or link minted for it (in the function, or by
	// every caller of a helper) is a resend by design; one sent after a test of the
	// clock (a resend interval, inline or in a helper), or carrying no secret, or only
	// the time, is reported.
	"shop/codes",
	// ONCE001: a plain insert under a primary key the package's migrations declare, given
	// a key a repeat gives again, whose error is checked before the email, is a latch
	// written by hand; one keyed by a random id, made in a branch, or into a table no
	// unique constraint covers, is none.
	"shop/grants",
	// ONCE001: a call through an interface of another package of the module, whose
	// implementation lives in a package the interface's cannot see but the caller
	// imports, reaches that implementation's effect.
	"shop/port", "shop/port/sesmail", "shop/port/notices", "shop/portapp",
	// ONCE001: a transport of another package given the method and the URL performs no
	// effect for a caller sending a POST to a URL the catalogue lists as a read.
	"shop/apiclient", "shop/apiuse",
	// ONCE001: a dispatcher whose every effect is in a branch on a parameter equal to a
	// constant is no effect when every call passes a constant no branch takes; one called
	// with a constant a branch takes is reported as usual.
	"shop/alerting", "shop/alertuse",
	// ONCE001: an HTTP handler that hands its request's question to a model and writes
	// the answer back, keeping nothing, is not judged; one that stores the answer or
	// also emails it is, and so is a model call outside a handler.
	"shop/askapi", "shop/askstore",
	// ONCE001: a helper whose one caller makes an effect of its own (the follow-up
	// suggestions of the endpoint that asks for the answer) is reported with that caller,
	// in one finding; one whose caller decides nothing itself, or that two functions
	// call, is reported where it is.
	"shop/answers",
	// ONCE001: the module's own client method that passes what it is given straight to
	// the model (Ask) is judged at the action that calls it; one that writes its own
	// prompt (Summarize) or retries in a loop (AskAgain) is reported where it is. An
	// action whose only effect is reported in the client (Retry) is no second adapter,
	// so the one that decides (Reply) is reported, not the dispatcher.
	"shop/chatclient", "shop/chatbot",
	// ONCE001 and ONCE005: a hand-written latch (a lease row taken by a refusing upsert, a
	// try-lock, a claim by an UPDATE from the old state, a token consumed by DELETE, an
	// insert ON CONFLICT DO NOTHING RETURNING) covers what runs once its outcome is
	// checked, here and in a function of another package called only there; a latch
	// whose outcome is ignored, or a statement a repeat passes again (an unconditional
	// UPDATE, an old state compared with a parameter), covers nothing. A latch two
	// unexported callers up (a batch helper's workers) covers the check and insert; the
	// same chain with no latch at the top is reported.
	"shop/tasklock", "shop/notices", "shop/crons",
	// ONCE005, what a read decides: a count held under a limit of two rows or more (a
	// constant, a parameter) is a cap, not an only-once check; a limit of one row, a count
	// against zero and an existence check after a cap are reported. An insert made only
	// where the read found its row (a token refreshed after its look-up) is not; one made
	// where it found none, or after a test of a bool, is. A session keyed by the id an
	// INSERT .. RETURNING just gave is not; one looked up by another column is.
	"shop/logins",
	// ONCE001: a function reaching an email reported further down (cancel.Cancelled) and
	// a POST reported nowhere else is reported at its callers for the POST, and their
	// findings name the POST, not the email already reported. A guarded call of some
	// other package's Close method does not make Admin.Close, nor the closure.Close and
	// cancel.Cancelled it calls, promised: Cancelled is still reported where it is.
	"shop/cancel", "shop/closure", "shop/closureapi",
	// ONCE001: the module's SMTP client and webhook sender, called through an interface
	// from another package, send only what they are given (Mail, Notify): their callers
	// decide, so they are judged there, not where they are defined. One that writes its
	// own message (Digest) or posts to an endpoint of its own (Register) is reported.
	"shop/smtpclient", "shop/smtpusers",
}

// Every check over every testdata package, in one load: analysistest type-checks each
// package's dependencies from source (net/http and its imports included) on every
// Run, so one run for all checks costs about what one run per check cost for a single
// package. Suggested fixes (ONCE004's) are compared with the .golden files.
func TestChecks(t *testing.T) {
	t.Parallel()
	dir, err := filepath.Abs("testdata")
	if err != nil {
		t.Fatal(err)
	}
	results := analysistest.RunWithSuggestedFixes(t, dir, all(analyzer.Analyzers), shop...)
	// A finding reported at a call that reaches the effect through other functions points
	// at them: the callee's declaration, then each step down to the provider call.
	want := map[string][]string{
		"call to notify.Receipt reaches":             {"notify.Receipt is declared here"},
		"call to (sms.Provider).SendMessage reaches": {"(sms.Provider).SendMessage is declared here"},
	}
	for _, r := range results {
		for _, d := range r.Diagnostics {
			for prefix, related := range want {
				if !strings.HasPrefix(d.Message, prefix) {
					continue
				}
				var got []string
				for _, rel := range d.Related {
					got = append(got, rel.Message)
				}
				for _, w := range related {
					if !slices.Contains(got, w) {
						t.Errorf("%s: related %q, want %q among them", d.Message, got, w)
					}
				}
				delete(want, prefix)
			}
		}
	}
	for prefix := range want {
		t.Errorf("no finding starting %q", prefix)
	}
}

// TestChecks_DependencyInternalsAreNoEffects loads a module whose dependency (replaced by
// a directory, so it has a version) logs through a webhook, registers clients, logs
// session misses and exchanges OAuth codes over POST: the application's calls of it are
// no effects, while its own POST is.
func TestChecks_DependencyInternalsAreNoEffects(t *testing.T) {
	t.Parallel()
	dir, err := filepath.Abs(filepath.Join("testdata", "deps"))
	if err != nil {
		t.Fatal(err)
	}
	analysistest.Run(t, dir, all(analyzer.Analyzers), "example.com/app/...")
}

// all joins the checks into one analyzer for analysistest, which runs one analyzer and
// compares its diagnostics and facts with the want comments. Each check's Run is called
// with the joined analyzer's pass: the checks share one effects analyzer, so its result
// is in the pass, and the joined analyzer declares every check's facts.
func all(checks []*analysis.Analyzer) *analysis.Analyzer {
	a := &analysis.Analyzer{Name: "oncelint", Doc: "every once check"}
	for _, c := range checks {
		for _, r := range c.Requires {
			if !slices.Contains(a.Requires, r) && !slices.Contains(checks, r) {
				a.Requires = append(a.Requires, r)
			}
		}
		a.FactTypes = append(a.FactTypes, c.FactTypes...)
	}
	a.Run = func(pass *analysis.Pass) (any, error) {
		// A check another requires (ONCE001 reads ONCE002's result) runs first, and its
		// result is handed on as the driver would.
		done := map[*analysis.Analyzer]bool{}
		var run func(c *analysis.Analyzer) error
		run = func(c *analysis.Analyzer) error {
			if done[c] {
				return nil
			}
			done[c] = true
			for _, r := range c.Requires {
				if slices.Contains(checks, r) {
					if err := run(r); err != nil {
						return err
					}
				}
			}
			res, err := c.Run(pass)
			if err != nil {
				return fmt.Errorf("%s: %w", c.Name, err)
			}
			pass.ResultOf[c] = res
			return nil
		}
		for _, c := range checks {
			if err := run(c); err != nil {
				return nil, err
			}
		}
		return nil, nil
	}
	return a
}
