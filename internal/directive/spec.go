package directive

import (
	"fmt"
	"strings"
	"time"
)

// Kind is the length of a declared promise.
type Kind string

// The eight kinds, from the shortest promise to the longest (see Rank).
const (
	Request     Kind = "request"
	Transaction Kind = "transaction"
	Lease       Kind = "lease"
	Open        Kind = "open"
	Episode     Kind = "episode"
	Statement   Kind = "statement"
	Provider    Kind = "provider"
	Forever     Kind = "forever"
)

// Kinds lists every kind from the shortest promise to the longest: a request, a
// transaction, a lease's TTL, while work is open, until an episode is rearmed, a counter's
// period, the provider's idempotency window, for ever. It is the order of the table's rows.
var Kinds = func() []Kind {
	ks := make([]Kind, len(specs))
	for i, s := range specs {
		ks[i] = s.Kind
	}
	return ks
}()

// Rank is k's place in Kinds (0 for the shortest promise), or -1 for an unknown kind.
func (k Kind) Rank() int {
	for i, s := range specs {
		if s.Kind == k {
			return i
		}
	}
	return -1
}

// Promise says, in a few words, how long a promise of kind k lasts.
func (k Kind) Promise() string {
	if s := SpecOf(k); s != nil {
		return s.Promise
	}
	return "unknown"
}

// SpecOf returns the row of kind k in the table, or nil for an unknown kind.
func SpecOf(k Kind) *Spec {
	if i := k.Rank(); i >= 0 {
		return specs[i]
	}
	return nil
}

// KindOfGuard returns the kind whose key= form a runtime guard type of package once (by its
// name: "Forever") keeps, if one does.
func KindOfGuard(typeName string) (Kind, bool) {
	for _, s := range specs {
		if s.Guard == typeName {
			return s.Kind, true
		}
	}
	return "", false
}

// TableGuard is the type name, in package once, of the runtime guard every table= form's
// wrapper calls: the promise is the user's insert, whatever the kind.
const TableGuard = "Table"

// Spec is one kind's row in the table: what the parser, the generator (wrapper, inventory,
// SQL) and the analyzer need to know of the kind. Columns that are text are data; columns
// whose value depends on the directive's arguments are small functions of it.
type Spec struct {
	// Kind is the kind the row describes.
	Kind Kind
	// Promise says, in a few words, how long the promise lasts.
	Promise string
	// Guard is the type name, in package once, of the runtime guard the key= form's wrapper
	// calls (a table= form's calls TableGuard).
	Guard string
	// TakesDB reports that the wrapper takes a once.DB: the guard keeps its promise in
	// PostgreSQL.
	TakesDB bool
	// SuppliesTx, when not empty, is why the key= form's function takes a pgx.Tx, which the
	// guard supplies. (Every table= form's function takes one, to insert in.)
	SuppliesTx string
	// Replays reports that a duplicate call gets the result the call that ran returned, not
	// only its status.
	Replays bool
	// NotRun is the Status, by its name in package once, of a call that does not run the
	// function because the promise is held or kept; "" for a kind whose every call runs it.
	NotRun string
	// Rearm reports the extra function the key= form generates beside the wrapper:
	// Rearm<F>, which rearms a key's episode (see RearmName).
	Rearm bool
	// CoversEffects reports that a promise of the kind covers the effects its function calls,
	// directly or through others: the analyzer does not ask for another promise under it.
	CoversEffects bool
	// MayWrapPaidEffect reports that the promise lasts long enough to guard an effect that
	// spends or sends (a charge, an email): the analyzer reports a paid effect under any
	// other kind as the wrong length.
	MayWrapPaidEffect bool

	// Fields are the runtime guard's fields the key= form's wrapper sets, in order: each
	// value a string, bool, time.Duration, IntOrExpr, RuntimeName or *Expr; a zero value is
	// left out.
	Fields func(d *Directive) []Field
	// Doc is the sentences of the key= form's wrapper doc that say what a call does, after
	// the promise, the guard and the key.
	Doc func(d *Directive) string
	// Mechanism says in a few words what keeps the key= form's promise (inventory).
	Mechanism func(d *Directive) string

	// Table is the kind's table= form; nil when it has none.
	Table *TableForm

	key form // the key= form's arguments
}

// TableForm is a kind's table= form: the promise is kept by the user's own rows, which the
// function inserts itself under a unique index on columns=.
type TableForm struct {
	// NotRunWords are how the wrapper's doc names what a call whose insert met the promise
	// reports (its Spec's NotRun).
	NotRunWords string
	// Conflict is what follows the conflict target in the ON CONFLICT clause the insert must
	// use: DO NOTHING, or the DO UPDATE that keeps the promise on an existing row.
	Conflict func(d *Directive) string
	// Predicate is a partial index's predicate, as pg_get_indexdef prints it (without
	// WHERE); nil for a full index.
	Predicate func(d *Directive) string
	// Columns are the columns of the table the form relies on, beyond the key columns; nil
	// for none.
	Columns func(d *Directive) []Column
	// Checks are the CHECK constraints the form adds to the table; nil for none.
	Checks func(d *Directive) []Check
	// Fields are the Table guard's fields the wrapper sets beyond Name and OnConflict (which
	// is the Spec's NotRun); nil for none.
	Fields func(d *Directive) []Field
	// Doc, when not nil, is a sentence the wrapper's doc adds at its end.
	Doc func(d *Directive) string
	// Mechanism says in a few words what keeps the promise (inventory).
	Mechanism func(d *Directive) string

	form // the table= form's arguments
}

// Field is one field of a runtime guard's composite literal, as a generated wrapper sets it.
type Field struct {
	Name  string
	Value any // string, bool, time.Duration, IntOrExpr, RuntimeName or *Expr (typed by CheckTypes)
}

// RuntimeName is a field value naming a declaration of package once (once.RecordDigest); ""
// leaves the field out.
type RuntimeName string

// Column is a column a table= form relies on. oncegen adopts it when the table has it in
// this form, adds it when the table has no such column, and refuses any other form.
type Column struct {
	// Name is the column; Role what it is to the guard (latch, counter), as messages and
	// the argument naming it say.
	Name, Role string
	// Type is the column's type as format_type prints it; NotNull whether it must be NOT
	// NULL (else nullable).
	Type    string
	NotNull bool
	// Add is the column's declaration when oncegen adds it, after its name. It has no
	// volatile default, so adding it rewrites no row and changes none already there.
	Add string
	// SetDefault, when not empty, is a default set in a statement of its own once the
	// column is added: it applies to rows inserted from then on.
	SetDefault string
}

// Check is a CHECK constraint a table= form adds: its name and its definition as
// pg_get_constraintdef prints it.
type Check struct {
	Name, Def string
}

// specs is the table: one row per kind, from the shortest promise to the longest.
var specs = []*Spec{
	{
		Kind:    Request,
		Promise: "once per request",
		Guard:   "Request", TakesDB: false, Replays: true, NotRun: "Duplicate",
		CoversEffects: false, MayWrapPaidEffect: false,
		key:    keyForm(map[string]argSpec{}),
		Fields: func(d *Directive) []Field { return []Field{{"Name", d.Name}} },
		Doc: func(d *Directive) string {
			return "Within one request scope (once.WithRequestScope), a second call with the same key gets the first call's result without running " + d.Func.Name.Name + "."
		},
		Mechanism: func(*Directive) string { return "memo in the request's context" },
	},
	{
		Kind:    Transaction,
		Promise: "once per transaction: one holder of the decision at a time",
		Guard:   "Transaction", TakesDB: true, NotRun: "Busy",
		SuppliesTx:    "the guard runs it in the transaction that holds the lock",
		CoversEffects: true, MayWrapPaidEffect: true,
		key: keyForm(map[string]argSpec{
			"wait": {typ: boolean, example: "wait=false",
				set: func(d *Directive, v value) { d.NoWait = !v.yes }},
			"timeout": {typ: duration, example: "timeout=5s",
				set: func(d *Directive, v value) { d.LockTimeout = v.dur }},
		}),
		Fields: func(d *Directive) []Field {
			return []Field{{"Name", d.Name}, {"NoWait", d.NoWait}, {"LockTimeout", d.LockTimeout}}
		},
		Doc: func(d *Directive) string {
			s := d.Func.Name.Name + " runs in a transaction holding a 64-bit advisory lock on the key, so calls with one key take turns"
			if d.NoWait {
				return s + "; a call that finds the lock held returns at once, busy."
			}
			return s + "."
		},
		Mechanism: func(d *Directive) string {
			s := "64-bit advisory transaction lock"
			if d.NoWait {
				s += ", busy instead of waiting"
			}
			if d.LockTimeout > 0 {
				s += ", lock timeout " + shortDuration(d.LockTimeout)
			}
			return s
		},
	},
	{
		Kind:    Lease,
		Promise: "one holder at a time, expiring by itself",
		Guard:   "Lease", TakesDB: true, NotRun: "Busy",
		CoversEffects: true, MayWrapPaidEffect: true,
		key: keyForm(map[string]argSpec{
			"ttl": {typ: duration, example: "ttl=10s",
				set: func(d *Directive, v value) { d.LeaseTTL = v.dur }},
			"wait": {typ: duration, example: "wait=2s",
				set: func(d *Directive, v value) { d.LeaseWait = v.dur }},
		}, "ttl"),
		Fields: func(d *Directive) []Field {
			return []Field{{"Name", d.Name}, {"TTL", d.LeaseTTL}, {"Wait", d.LeaseWait}}
		},
		Doc: func(d *Directive) string {
			return fmt.Sprintf("One holder at a time per key, for up to %s; a call that finds the lease held is busy.", shortDuration(d.LeaseTTL))
		},
		Mechanism: func(d *Directive) string {
			s := "lease row in once.leases with owner token, ttl " + shortDuration(d.LeaseTTL)
			if d.LeaseWait > 0 {
				s += ", waits " + shortDuration(d.LeaseWait)
			}
			return s
		},
	},
	{
		Kind:    Open,
		Promise: "once while the work is open",
		Guard:   "Open", TakesDB: true, NotRun: "InFlight",
		CoversEffects: true, MayWrapPaidEffect: true,
		key: keyForm(map[string]argSpec{
			"stale": {typ: duration, example: "stale=20m",
				set: func(d *Directive, v value) { d.Stale = v.dur }},
		}),
		Fields: func(d *Directive) []Field { return []Field{{"Name", d.Name}, {"Stale", d.Stale}} },
		Doc: func(d *Directive) string {
			return fmt.Sprintf("While a call with the same key is open, another gets in flight with the open claim's handle; once it ends, the key can run again. An open claim that showed no life for %s is closed as stale.", staleText(d.Stale))
		},
		Mechanism: func(d *Directive) string {
			return "claim in once.open_claims under a partial unique index; stale after " + staleText(d.Stale) + " with no sign of life"
		},
		Table: &TableForm{
			form: tableForm(map[string]argSpec{
				"status": {typ: ident, example: "status=status",
					set: func(d *Directive, v value) { d.Status = v.text }},
				"open": {typ: wordList, example: "open=pending,running",
					set: func(d *Directive, v value) { d.OpenValues = v.words }},
			}, "status", "open"),
			NotRunWords: "the work in flight (with the handle once.Conflict names)",
			// The values as literals, text-identical to the index predicate: a bound parameter
			// there fails with 42P10 once the plan goes generic.
			Conflict: func(d *Directive) string {
				return fmt.Sprintf("WHERE %s IN (%s) DO NOTHING", d.Status, strings.Join(quoted(d.OpenValues, ""), ", "))
			},
			// As pg_get_indexdef prints it for a text status column.
			Predicate: func(d *Directive) string {
				if len(d.OpenValues) == 1 {
					return fmt.Sprintf("(%s = '%s'::text)", d.Status, d.OpenValues[0])
				}
				return fmt.Sprintf("(%s = ANY (ARRAY[%s]))", d.Status, strings.Join(quoted(d.OpenValues, "::text"), ", "))
			},
			Mechanism: func(d *Directive) string {
				return fmt.Sprintf("partial unique index on %s while %s IN (%s); the insert is the check", d.Table, d.Status, strings.Join(d.OpenValues, ", "))
			},
		},
	},
	{
		Kind:    Episode,
		Promise: "once per episode, until rearmed",
		Guard:   "Episode", TakesDB: true, NotRun: "Duplicate", Rearm: true,
		CoversEffects: true, MayWrapPaidEffect: true,
		key:    keyForm(map[string]argSpec{}),
		Fields: func(d *Directive) []Field { return []Field{{"Name", d.Name}} },
		Doc: func(d *Directive) string {
			f := d.Func.Name.Name
			return "A call that fires the key's latch runs " + f + "; until " + RearmName(f) + " rearms it, further calls are duplicates."
		},
		Mechanism: func(d *Directive) string {
			return "latch in once.latches, set only where NULL; " + RearmName(d.Func.Name.Name) + " rearms"
		},
		Table: &TableForm{
			form: tableForm(map[string]argSpec{
				"latch": {typ: ident, example: "latch=fired_at",
					set: func(d *Directive, v value) { d.Latch = v.text }},
			}, "latch"),
			NotRunWords: "a duplicate (the latch is set)",
			// A rearmed row (latch NULL) fires again; a fired one gives no row.
			Conflict: func(d *Directive) string {
				return fmt.Sprintf("DO UPDATE SET %s = clock_timestamp() WHERE %s.%s IS NULL", d.Latch, d.relation(), d.Latch)
			},
			// Added NULL (armed) and its default set after: a volatile default in the ADD
			// would fill every row already there, latching every key's current episode.
			Columns: func(d *Directive) []Column {
				return []Column{{Name: d.Latch, Role: "latch", Type: "timestamp with time zone", Add: "timestamptz NULL", SetDefault: "clock_timestamp()"}}
			},
			Mechanism: func(d *Directive) string {
				return fmt.Sprintf("latch column %s.%s set only where NULL, unique index", d.Table, d.Latch)
			},
		},
	},
	{
		Kind:    Statement,
		Promise: "once per unit of a counter's cap",
		Guard:   "Statement", TakesDB: true, NotRun: "Refused",
		CoversEffects: true, MayWrapPaidEffect: true,
		key: keyForm(map[string]argSpec{
			"cap": {typ: intOrExpr, example: "cap=100",
				set: func(d *Directive, v value) { d.Cap = v.num }},
			"n": {typ: intOrExpr, example: "n=1",
				set:       func(d *Directive, v value) { d.N = v.num },
				byDefault: func(d *Directive) { d.N = IntOrExpr{IsLit: true, Lit: 1} }},
		}, "cap"),
		Fields: func(d *Directive) []Field { return []Field{{"Name", d.Name}, {"Cap", d.Cap}} },
		Doc: func(d *Directive) string {
			return "Each call reserves its units against the cap first and runs " + d.Func.Name.Name + " only if they fit; past the cap it is refused."
		},
		Mechanism: func(d *Directive) string {
			return fmt.Sprintf("units as rows of once.counter_slots: reserve %s below cap %s in one statement", d.N.text(), d.Cap.text())
		},
		Table: &TableForm{
			form: tableForm(map[string]argSpec{
				"counter": {typ: ident, example: "counter=used",
					set: func(d *Directive, v value) { d.Counter = v.text }},
				"cap": {typ: intLit, example: "cap=100",
					set: func(d *Directive, v value) { d.Cap = v.num }},
			}, "counter", "cap"),
			NotRunWords: "a refusal (the cap is reached)",
			// The counter grows by the inserted amount while it stays within the cap; past it,
			// no row. A key's first insert meets no conflict: the cap check keeps it within.
			Conflict: func(d *Directive) string {
				rel, c := d.relation(), d.Counter
				return fmt.Sprintf("DO UPDATE SET %s = %s.%s + EXCLUDED.%s WHERE %s.%s + EXCLUDED.%s <= %d", c, rel, c, c, rel, c, c, d.Cap.Lit)
			},
			Columns: func(d *Directive) []Column {
				return []Column{{Name: d.Counter, Role: "counter", Type: "bigint", NotNull: true, Add: "bigint NOT NULL DEFAULT 0"}}
			},
			Checks: func(d *Directive) []Check {
				return []Check{{d.CheckName(), fmt.Sprintf("CHECK ((%s >= 0))", d.Counter)}, {d.CapName(), d.CapDef()}}
			},
			Fields: func(d *Directive) []Field { return []Field{{"CapCheck", d.CapName()}} },
			Doc: func(d *Directive) string {
				return fmt.Sprintf("A key's first insert meets no conflict: one of more than the cap violates the check %s, which is reported as a refusal too, with nothing written.", d.CapName())
			},
			Mechanism: func(d *Directive) string {
				return fmt.Sprintf("counter column %s.%s grown within cap %d, unique index", d.Table, d.Counter, d.Cap.Lit)
			},
		},
	},
	{
		Kind:    Provider,
		Promise: "once at the provider, by its idempotency key",
		Guard:   "Provider", TakesDB: false, NotRun: "",
		CoversEffects: true, MayWrapPaidEffect: true,
		key: keyForm(map[string]argSpec{
			"prefix": {typ: word, example: "prefix=charge",
				set:       func(d *Directive, v value) { d.ProviderPrefix = v.text },
				byDefault: func(d *Directive) { d.ProviderPrefix = d.Name }},
			"ttl": {typ: duration, example: "ttl=24h",
				set: func(d *Directive, v value) { d.ProviderWindow = v.dur }},
		}),
		Fields: func(d *Directive) []Field {
			return []Field{{"Prefix", d.ProviderPrefix}, {"TTL", d.ProviderWindow}}
		},
		Doc: func(d *Directive) string {
			return fmt.Sprintf("%s's context carries the provider's idempotency key (once.ProviderKeyFrom), %q and the key, the same for every retry.", d.Func.Name.Name, d.ProviderPrefix)
		},
		Mechanism: func(d *Directive) string {
			s := fmt.Sprintf("provider idempotency key %q + key", d.ProviderPrefix+"-")
			if d.ProviderWindow > 0 {
				s += ", provider window " + shortDuration(d.ProviderWindow)
			}
			return s
		},
	},
	{
		Kind:    Forever,
		Promise: "once for ever",
		Guard:   "Forever", TakesDB: true, Replays: true, NotRun: "Duplicate",
		CoversEffects: true, MayWrapPaidEffect: true,
		key: keyForm(map[string]argSpec{
			"retain": {typ: duration, example: "retain=720h",
				set: func(d *Directive, v value) { d.Retain = v.dur }},
			"stale": {typ: duration, example: "stale=1h",
				set: func(d *Directive, v value) { d.Stale = v.dur }},
			"scope": {typ: expr, example: "scope=org.ID",
				set: func(d *Directive, v value) { d.Scope = &v.exprs[0] }},
			"fingerprint": {typ: exprList, example: "fingerprint=req.Amount,req.Currency",
				set: func(d *Directive, v value) { d.Fingerprint = v.exprs }},
			"repeat": {typ: enum, only: "safe", example: "repeat=safe",
				set: func(d *Directive, v value) { d.RepeatSafe = v.yes }},
			"wait": {typ: duration, example: "wait=5s",
				set: func(d *Directive, v value) { d.ForeverWait = v.dur }},
			"result": {typ: enum, only: "value|none|digest", example: "result=none",
				set: func(d *Directive, v value) { d.Result = v.text }},
			"seal": {typ: expr, example: "seal=resultSealer",
				set: func(d *Directive, v value) { d.Seal = &v.exprs[0] }},
		}),
		Fields: func(d *Directive) []Field {
			return []Field{{"Name", d.Name}, {"Retain", d.Retain}, {"Stale", d.Stale}, {"RepeatSafe", d.RepeatSafe}, {"Wait", d.ForeverWait},
				{"Record", recordConst[d.Result]}, {"Seal", d.Seal}}
		},
		Doc: func(d *Directive) string {
			s := "A duplicate call does not run " + d.Func.Name.Name + ": it gets the outcome, and result, the first call recorded"
			switch d.Result {
			case "none":
				s = "A duplicate call does not run " + d.Func.Name.Name + ": it gets the outcome the first call recorded, and the zero value (result=none records nothing of the result)"
			case "digest":
				s = "A duplicate call does not run " + d.Func.Name.Name + ": it gets the outcome the first call recorded, and the zero value (result=digest records only the result's SHA-256)"
			}
			if d.ForeverWait > 0 {
				s += "; one that finds the first still running waits up to " + shortDuration(d.ForeverWait) + " for it, then answers in flight."
			} else {
				s += "; one that finds the first still running answers in flight."
			}
			if d.Seal != nil {
				s += " The result is recorded sealed by " + d.Seal.Text + " and opened by it for a duplicate."
			}
			return s
		},
		Mechanism: func(d *Directive) string {
			s := "unique claim in once.operations, outcome recorded"
			switch {
			case d.Result == "none":
				s += " without its result"
			case d.Result == "digest":
				s += " with its result's digest"
			case d.Seal != nil:
				s += " with its result sealed by " + d.Seal.Text
			}
			if d.Retain > 0 {
				s += ", kept " + shortDuration(d.Retain)
			}
			if d.Scope != nil {
				s += ", scoped by " + d.Scope.Text
			}
			if len(d.Fingerprint) > 0 {
				s += ", input fingerprinted"
			}
			return s
		},
		Table: &TableForm{
			form: tableForm(map[string]argSpec{
				"nulls": {typ: enum, only: "notdistinct", example: "nulls=notdistinct",
					set: func(d *Directive, v value) { d.NullsNotDistinct = v.yes }},
			}),
			NotRunWords: "a duplicate",
			Conflict:    func(*Directive) string { return "DO NOTHING" },
			Mechanism: func(d *Directive) string {
				s := "unique index on " + d.Table
				if d.NullsNotDistinct {
					s += " (NULLS NOT DISTINCT)"
				}
				return s + "; the insert is the check"
			},
		},
	},
}

// recordConst names, by forever's result=, the once.Record constant the wrapper sets; the
// value (the default) sets none.
var recordConst = map[string]RuntimeName{"none": "RecordNothing", "digest": "RecordDigest"}

// KeyedByRef reports that the kind's runtime guard takes a once.Ref (scope, key and input)
// where the others take a key: the kind whose key= form takes scope= (forever).
func (s *Spec) KeyedByRef() bool {
	_, ok := s.key.args["scope"]
	return ok
}

// tableArgs is the table= form's arguments; nil for a kind without one.
func (s *Spec) tableArgs() map[string]argSpec {
	if s.Table == nil {
		return nil
	}
	return s.Table.args
}

// quoted returns each value as a SQL string literal, followed by suffix.
func quoted(values []string, suffix string) []string {
	out := make([]string, len(values))
	for i, v := range values {
		out[i] = "'" + v + "'" + suffix
	}
	return out
}

// text is the argument as written: the literal, or the expression.
func (n IntOrExpr) text() string {
	if n.IsLit {
		return fmt.Sprint(n.Lit)
	}
	return n.Expr.Text
}

// shortDuration writes d without zero units: 45m, not 45m0s.
func shortDuration(d time.Duration) string {
	s := d.String()
	if strings.HasSuffix(s, "m0s") {
		s = s[:len(s)-2]
	}
	if strings.HasSuffix(s, "h0m") {
		s = s[:len(s)-2]
	}
	return s
}

// staleText is an open claim's stale window as written: stale=, or the runtime's default.
func staleText(d time.Duration) string {
	if d == 0 {
		return "45s (the runtime's default on a pool; 20m on one connection)"
	}
	return shortDuration(d)
}
