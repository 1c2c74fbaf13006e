package once_test

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"math"
	"reflect"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	once "github.com/oncekit/once/runtime"
)

// secretIn counts the rows of once.operations whose text, every column of them, holds secret.
func secretIn(t testing.TB, db once.DB, secret string) int {
	t.Helper()
	var n int
	err := db.QueryRow(context.Background(),
		`SELECT count(*) FROM once.operations WHERE row_to_json(operations)::text LIKE '%' || $1 || '%'`, secret).Scan(&n)
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// storedResult reads the result and its form as stored for one key of a guard.
func storedResult(t testing.TB, db once.DB, name, key string) (result *string, form *string, errText *string) {
	t.Helper()
	err := db.QueryRow(context.Background(), `SELECT result::text, result_form, error FROM once.operations WHERE name = $1 AND key = $2`,
		name, key).Scan(&result, &form, &errText)
	if err != nil {
		t.Fatalf("reading %s %s: %v", name, key, err)
	}
	return result, form, errText
}

func str(p *string) string {
	if p == nil {
		return "NULL"
	}
	return *p
}

// countingSealer counts its calls, and fails them when told to.
type countingSealer struct {
	inner             once.Sealer
	seals, opens      atomic.Int64
	failSeal, failOpn error
}

func (c *countingSealer) Seal(ctx context.Context, plain []byte) ([]byte, error) {
	c.seals.Add(1)
	if c.failSeal != nil {
		return nil, c.failSeal
	}
	return c.inner.Seal(ctx, plain)
}

func (c *countingSealer) Open(ctx context.Context, sealed []byte) ([]byte, error) {
	c.opens.Add(1)
	if c.failOpn != nil {
		return nil, c.failOpn
	}
	return c.inner.Open(ctx, sealed)
}

func testAESSealer(t testing.TB) aesSealer {
	s, err := newAESSealer([]byte("an-application-key-of-32-bytes!!"))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// Each form of a recorded result: the key recorded once, a duplicate replayed as the docs
// say, and the secret of the value absent from every column of the row (present for the
// plain value: the negative control that shows the SQL assertion can fail).
func TestForever_ResultsAtRest(t *testing.T) {
	t.Parallel()
	pool := setup(t, 4)
	ctx := context.Background()
	const secret = "pi_9_secret_4f1c2a"
	value := intent{ID: "pi_9", ClientSecret: secret}
	digest := func() string {
		sum := sha256.Sum256([]byte(`{"client_secret":"` + secret + `","id":"pi_9"}`)) // canonical: keys sorted
		return `"` + hex.EncodeToString(sum[:]) + `"`
	}()
	cases := []struct {
		name      string
		guard     once.Forever
		replayed  intent // what a duplicate gets
		form      string // result_form, "NULL" for plain
		stored    string // the result as stored, when it is known in advance ("" to skip)
		secretRow int    // rows holding the secret: 1 only for the plain value
	}{
		{"value", once.Forever{}, value, "NULL", "", 1},
		{"nothing", once.Forever{Record: once.RecordNothing}, intent{}, "none", "NULL", 0},
		{"digest", once.Forever{Record: once.RecordDigest}, intent{}, "digest", digest, 0},
		{"sealed", once.Forever{Seal: testAESSealer(t)}, value, "sealed", "", 0},
		{"redacted", once.Forever{Seal: redactor{drop: []string{"client_secret"}}}, intent{ID: "pi_9"}, "sealed",
			`"` + "eyJpZCI6InBpXzkifQ==" + `"`, 0}, // base64 of {"id":"pi_9"}
	}
	for _, c := range cases {
		g := c.guard
		g.Name = "billing.CreateIntent." + c.name
		runs := 0
		create := func(ctx context.Context) (intent, error) {
			runs++
			return value, effect(ctx, pool, g.Name, "order/9", runs)
		}
		got, out, err := once.ForeverValue(ctx, pool, g, once.Ref{Key: "order/9"}, create)
		if err != nil || out.Status != once.Ran || got != value {
			t.Fatalf("%s: first call: %+v, %+v, %v; want Ran with the value", c.name, got, out, err)
		}
		for range 2 {
			again, out2, err := once.ForeverValue(ctx, pool, g, once.Ref{Key: "order/9"}, create)
			if err != nil || out2.Status != once.Duplicate || out2.Holder != out.Claim || again != c.replayed {
				t.Fatalf("%s: duplicate: %+v, %+v, %v; want Duplicate of %s with %+v", c.name, again, out2, err, out.Claim, c.replayed)
			}
		}
		if n := effects(t, pool, g.Name, "order/9"); n != 1 || runs != 1 {
			t.Fatalf("%s: %d effects, %d runs; want 1", c.name, n, runs)
		}
		if r := operationState(t, pool, out.Claim); r.state != "done" || r.errText != "" {
			t.Fatalf("%s: operation %+v, want done without error", c.name, r)
		}
		result, form, _ := storedResult(t, pool, g.Name, "order/9")
		if str(form) != c.form || (c.stored != "" && str(result) != c.stored) {
			t.Fatalf("%s: stored %s as %s; want %q as %s", c.name, str(result), str(form), c.stored, c.form)
		}
		var n int
		err = pool.QueryRow(ctx, `SELECT count(*) FROM once.operations WHERE name = $1 AND row_to_json(operations)::text LIKE '%' || $2 || '%'`,
			g.Name, secret).Scan(&n)
		if err != nil {
			t.Fatal(err)
		}
		if n != c.secretRow {
			t.Fatalf("%s: the secret is in %d rows of once.operations, want %d", c.name, n, c.secretRow)
		}
	}
	// Across the whole table: only the plain guard's row holds it.
	if n := secretIn(t, pool, secret); n != 1 {
		t.Fatalf("the secret is in %d rows, want 1 (the plain value's)", n)
	}
}

// A sealed result, replayed to many duplicates at once: the function and Seal run once,
// every caller gets the whole value, each through its own Open.
func TestForever_SealedResultStormRunsOnceAndOpensForEveryDuplicate(t *testing.T) {
	t.Parallel()
	pool := setup(t, 16)
	ctx := context.Background()
	sealer := &countingSealer{inner: testAESSealer(t)}
	g := once.Forever{Name: "billing.CreateIntent.storm", Seal: sealer, Wait: 10 * time.Second}
	value := intent{ID: "pi_s", ClientSecret: "pi_s_secret_77"}
	var runs atomic.Int64
	start := make(chan struct{})
	const callers = 32
	var wg sync.WaitGroup
	results := make(chan intent, callers)
	errs := make(chan error, callers)
	for i := range callers {
		wg.Go(func() {
			<-start
			v, out, err := once.ForeverValue(ctx, pool, g, once.Ref{Key: "order/s"}, func(ctx context.Context) (intent, error) {
				runs.Add(1)
				time.Sleep(50 * time.Millisecond) // the others arrive while it runs
				return value, effect(ctx, pool, g.Name, "order/s", i)
			})
			if err != nil || (out.Status != once.Ran && out.Status != once.Duplicate) {
				errs <- errors.Join(err, errors.New("status "+out.Status.String()))
				return
			}
			results <- v
		})
	}
	close(start)
	wg.Wait()
	close(results)
	close(errs)
	for err := range errs {
		t.Fatal(err)
	}
	n := 0
	for v := range results {
		n++
		if v != value {
			t.Fatalf("a caller got %+v, want %+v", v, value)
		}
	}
	if n != callers || runs.Load() != 1 || sealer.seals.Load() != 1 || sealer.opens.Load() != callers-1 {
		t.Fatalf("%d answers, %d runs, %d seals, %d opens; want %d, 1, 1, %d", n, runs.Load(), sealer.seals.Load(), sealer.opens.Load(), callers, callers-1)
	}
	if e := effects(t, pool, g.Name, "order/s"); e != 1 {
		t.Fatalf("%d effects, want 1", e)
	}
	if s := secretIn(t, pool, value.ClientSecret); s != 0 {
		t.Fatalf("the secret is in %d rows, want none", s)
	}
}

// A Seal that fails after the function succeeded loses nothing of the effect: the operation
// is recorded done, without its result, with an error saying why (the Sealer's own error goes
// to the caller only); the caller gets its value and an error; a duplicate does not run the
// function again.
func TestForever_SealFailureRecordsDoneWithoutTheResult(t *testing.T) {
	t.Parallel()
	pool := setup(t, 4)
	ctx := context.Background()
	kms := errors.New("kms: key unavailable")
	sealer := &countingSealer{inner: testAESSealer(t), failSeal: kms}
	g := once.Forever{Name: "billing.CreateIntent.sealfails", Seal: sealer}
	value := intent{ID: "pi_f", ClientSecret: "pi_f_secret_31"}
	runs := 0
	create := func(ctx context.Context) (intent, error) {
		runs++
		return value, effect(ctx, pool, g.Name, "order/f", runs)
	}
	got, out, err := once.ForeverValue(ctx, pool, g, once.Ref{Key: "order/f"}, create)
	if !errors.Is(err, kms) || !errors.Is(err, once.ErrResultTooLarge) || out.Status != once.Ran || got != value {
		t.Fatalf("first call: %+v, %+v, %v; want Ran with the value and an error wrapping the seal's", got, out, err)
	}
	result, form, errText := storedResult(t, pool, g.Name, "order/f")
	// The Sealer's own error may quote what it could not seal: the row says why, not what.
	if result != nil || form != nil || !strings.Contains(str(errText), "could not be sealed") || strings.Contains(str(errText), "kms") {
		t.Fatalf("stored %s as %s with error %q; want no result, recorded done with the reason and not the seal's error", str(result), str(form), str(errText))
	}
	if r := operationState(t, pool, out.Claim); r.state != "done" {
		t.Fatalf("operation %+v, want done", r)
	}
	again, out2, err := once.ForeverValue(ctx, pool, g, once.Ref{Key: "order/f"}, create)
	if !errors.Is(err, once.ErrResultTooLarge) || !strings.Contains(err.Error(), "could not be sealed") || out2.Status != once.Duplicate || again != (intent{}) {
		t.Fatalf("duplicate: %+v, %+v, %v; want Duplicate, the zero value and the recorded reason", again, out2, err)
	}
	if n := effects(t, pool, g.Name, "order/f"); n != 1 || runs != 1 {
		t.Fatalf("%d effects, %d runs; want 1", n, runs)
	}
	if s := secretIn(t, pool, value.ClientSecret); s != 0 {
		t.Fatalf("the secret is in %d rows, want none", s)
	}
}

// An Open that fails at replay answers the duplicate with an error wrapping it, Duplicate
// (the work was done), and changes nothing in the row: once the key is back, the next
// duplicate opens it.
func TestForever_OpenFailureChangesNothing(t *testing.T) {
	t.Parallel()
	pool := setup(t, 4)
	ctx := context.Background()
	lost := errors.New("kms: key unavailable")
	sealer := &countingSealer{inner: testAESSealer(t)}
	g := once.Forever{Name: "billing.CreateIntent.openfails", Seal: sealer}
	value := intent{ID: "pi_o", ClientSecret: "pi_o_secret_58"}
	runs := 0
	create := func(ctx context.Context) (intent, error) {
		runs++
		return value, effect(ctx, pool, g.Name, "order/o", runs)
	}
	if _, out, err := once.ForeverValue(ctx, pool, g, once.Ref{Key: "order/o"}, create); err != nil || out.Status != once.Ran {
		t.Fatalf("first call: %+v, %v", out, err)
	}
	rowText := func() string {
		var s string
		if err := pool.QueryRow(ctx, `SELECT row_to_json(operations)::text FROM once.operations WHERE name = $1`, g.Name).Scan(&s); err != nil {
			t.Fatal(err)
		}
		return s
	}
	before := rowText()
	sealer.failOpn = lost
	got, out, err := once.ForeverValue(ctx, pool, g, once.Ref{Key: "order/o"}, create)
	if !errors.Is(err, lost) || out.Status != once.Duplicate || got != (intent{}) {
		t.Fatalf("duplicate with Open failing: %+v, %+v, %v; want Duplicate, the zero value and an error wrapping Open's", got, out, err)
	}
	if after := rowText(); after != before {
		t.Fatalf("the row changed:\n%s\n%s", before, after)
	}
	// Another key: a different Sealer (a rotated key) cannot open it either.
	other := g
	other.Seal = testAESSealerOther(t)
	if _, out, err := once.ForeverValue(ctx, pool, other, once.Ref{Key: "order/o"}, create); err == nil || out.Status != once.Duplicate {
		t.Fatalf("duplicate under another key: %+v, %v; want Duplicate and an error", out, err)
	}
	sealer.failOpn = nil
	got, out, err = once.ForeverValue(ctx, pool, g, once.Ref{Key: "order/o"}, create)
	if err != nil || out.Status != once.Duplicate || got != value {
		t.Fatalf("duplicate with Open back: %+v, %+v, %v; want the value", got, out, err)
	}
	if n := effects(t, pool, g.Name, "order/o"); n != 1 || runs != 1 {
		t.Fatalf("%d effects, %d runs; want 1", n, runs)
	}
}

func testAESSealerOther(t testing.TB) aesSealer {
	s, err := newAESSealer([]byte("another-key-of-thirty-two-bytes!"))
	if err != nil {
		t.Fatal(err)
	}
	return s
}

// Settings that contradict each other are refused before anything is written.
func TestForever_RecordSettingsAreChecked(t *testing.T) {
	t.Parallel()
	pool := setup(t, 2)
	ctx := context.Background()
	for _, g := range []once.Forever{
		{Name: "billing.Bad1", Record: once.RecordDigest, Seal: redactor{}},
		{Name: "billing.Bad2", Record: once.RecordNothing, Seal: redactor{}},
		{Name: "billing.Bad3", Record: once.Record(9)},
	} {
		_, _, err := once.ForeverValue(ctx, pool, g, once.Ref{Key: "k"}, func(context.Context) (int, error) { return 1, nil })
		if !errors.Is(err, once.ErrInvalid) {
			t.Fatalf("%s: %v, want ErrInvalid", g.Name, err)
		}
	}
	if n := onceRows(t, pool); n != 0 {
		t.Fatalf("%d rows written, want none", n)
	}
}

// The column's domain keeps the forms to the runtime's own: a form it does not write is
// refused by the database itself, and every form it writes is accepted.
func TestForever_ResultFormCheck(t *testing.T) {
	t.Parallel()
	pool := setup(t, 2)
	ctx := context.Background()
	for _, form := range []string{"secret", "", "Sealed", "none "} {
		_, err := pool.Exec(ctx, `INSERT INTO once.operations (name, scope, key, id, token, result, result_form)
VALUES ('check.Form', '', $1, gen_random_uuid(), 't', '"x"', $2)`, "refused/"+form, form)
		if err == nil || !strings.Contains(err.Error(), "operations_result_form") {
			t.Fatalf("form %q: %v; want the domain to refuse it", form, err)
		}
	}
	for _, c := range []struct{ result, form any }{{`"x"`, nil}, {nil, nil}, {`"x"`, "sealed"}, {`"x"`, "digest"}, {nil, "none"}} {
		if _, err := pool.Exec(ctx, `INSERT INTO once.operations (name, scope, key, id, token, result, result_form)
VALUES ('check.Form', '', gen_random_uuid()::text, gen_random_uuid(), 't', $1::json, $2)`, c.result, c.form); err != nil {
			t.Fatalf("result %v as %v: %v; want it accepted", c.result, c.form, err)
		}
	}
	var n int
	if err := pool.QueryRow(ctx, `SELECT count(*) FROM once.operations WHERE name = 'check.Form'`).Scan(&n); err != nil || n != 5 {
		t.Fatalf("%d rows (%v), want the 5 accepted", n, err)
	}
}

// A row whose form and result disagree (edited by hand: the domain checks the form alone)
// replays as its form says, and never as a value it does not hold.
func TestForever_ResultFormEditedByHandReplays(t *testing.T) {
	t.Parallel()
	pool := setup(t, 2)
	ctx := context.Background()
	g := once.Forever{Name: "check.FormByHand"}
	for _, c := range []struct {
		key, result, form string
	}{{"none-with-result", `{"ChargeID":"ch_1"}`, "none"}, {"digest-without", "", "digest"}, {"sealed-without", "", "sealed"}} {
		var result any
		if c.result != "" {
			result = c.result
		}
		if _, err := pool.Exec(ctx, `INSERT INTO once.operations (name, scope, key, id, token, state, result, result_form)
VALUES ($1, '', $2, gen_random_uuid(), 't', 'done', $3::json, $4)`, g.Name, c.key, result, c.form); err != nil {
			t.Fatal(err)
		}
		ran := false
		got, out, err := once.ForeverValue(ctx, pool, g, once.Ref{Key: c.key}, func(context.Context) (receipt, error) {
			ran = true
			return receipt{ChargeID: "again"}, nil
		})
		if ran || err != nil || out.Status != once.Duplicate || !reflect.DeepEqual(got, receipt{}) {
			t.Fatalf("%s: ran %v, %+v, %+v, %v; want a duplicate with no value", c.key, ran, got, out, err)
		}
	}
}

// A digest of a value that cannot be encoded loses nothing either: the call that ran gets its
// value and ErrResultTooLarge, never ErrInvalid, whose promise is that nothing was written.
func TestForever_DigestOfAnUnencodableValue(t *testing.T) {
	t.Parallel()
	pool := setup(t, 2)
	ctx := context.Background()
	g := once.Forever{Name: "metrics.Score.digest", Record: once.RecordDigest}
	got, out, err := once.ForeverValue(ctx, pool, g, once.Ref{Key: "nan"}, func(context.Context) (float64, error) {
		return math.NaN(), nil
	})
	if !errors.Is(err, once.ErrResultTooLarge) || errors.Is(err, once.ErrInvalid) || out.Status != once.Ran || !math.IsNaN(got) {
		t.Fatalf("got %v, %+v, %v; want Ran with the value and ErrResultTooLarge, not ErrInvalid", got, out, err)
	}
	if r := operationState(t, pool, out.Claim); r.state != "done" {
		t.Fatalf("operation %+v, want done", r)
	}
}
