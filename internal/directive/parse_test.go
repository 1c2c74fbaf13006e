package directive_test

import (
	"go/parser"
	"go/token"
	"strings"
	"testing"
	"time"

	"github.com/oncekit/once/internal/directive"
)

func parse(t *testing.T, src string) ([]*directive.Directive, []*directive.Error) {
	t.Helper()
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "a.go", src, parser.ParseComments)
	if err != nil {
		t.Fatalf("parsing source: %v", err)
	}
	return directive.ParseFile(fset, f)
}

const header = "package app\n\nimport \"context\"\n\n"

func TestParseFile_EveryKindWithItsArguments(t *testing.T) {
	t.Parallel()
	src := header + `
//once:request key=u.ID
func A(ctx context.Context, u User) error { return nil }

//once:transaction key=org wait=false timeout=5s
func B(ctx context.Context, org int64) error { return nil }

//once:statement key=org,day cap=100 n=units name=ideas:daily
func C(ctx context.Context, org int64, day string, units int) error { return nil }

//once:episode key=alert.ID
func D(ctx context.Context, alert Alert) error { return nil }

//once:open key=org.ID
func E(ctx context.Context, org Org) error { return nil }

//once:forever key=order.ID retain=720h stale=1h scope=order.Org fingerprint=order.Amount,order.Currency repeat=safe
func (s *Service) F(ctx context.Context, order Order) (Receipt, error) { return Receipt{}, nil }

//once:provider key=reply.ID prefix=answer ttl=24h
func G(ctx context.Context, reply Reply) error { return nil }

//once:lease key=job ttl=10s wait=2s
func H(ctx context.Context, job string) error { return nil }

//once:statement key=org cap=3
func J(ctx context.Context, org int64) error { return nil }

//once:provider "key=pair(a, b)"
func I(ctx context.Context, a, b int) error { return nil }
`
	ds, errs := parse(t, src)
	if len(errs) > 0 {
		t.Fatalf("errors: %v", errs)
	}
	if len(ds) != 10 {
		t.Fatalf("got %d directives, want 10", len(ds))
	}
	byFunc := map[string]*directive.Directive{}
	for _, d := range ds {
		byFunc[d.Func.Name.Name] = d
	}
	check := func(name string, got, want any) {
		t.Helper()
		if got != want {
			t.Errorf("%s = %v, want %v", name, got, want)
		}
	}
	check("A.Kind", byFunc["A"].Kind, directive.Request)
	check("A.Name", byFunc["A"].Name, "app.A")
	check("A.Key", byFunc["A"].Key[0].Text, "u.ID")
	check("A.Key offset", int(byFunc["A"].Key[0].Pos-byFunc["A"].Slash), len("//once:request key="))
	check("B.NoWait", byFunc["B"].NoWait, true)
	check("B.LockTimeout", byFunc["B"].LockTimeout, 5*time.Second)
	c := byFunc["C"]
	check("C.Name", c.Name, "ideas:daily")
	check("C.NameSet", c.NameSet, true)
	check("C.Key", len(c.Key), 2)
	check("C.Cap", c.Cap, directive.IntOrExpr{IsLit: true, Lit: 100})
	check("C.N", c.N.Expr.Text, "units")
	check("E.Stale", byFunc["E"].Stale, time.Duration(0)) // the runtime's default
	f := byFunc["F"]
	check("F.Name", f.Name, "app.Service.F")
	check("F.Retain", f.Retain, 720*time.Hour)
	check("F.Scope", f.Scope.Text, "order.Org")
	check("F.Fingerprint", len(f.Fingerprint), 2)
	check("F.RepeatSafe", f.RepeatSafe, true)
	check("G.Prefix", byFunc["G"].ProviderPrefix, "answer")
	check("G.ProviderWindow", byFunc["G"].ProviderWindow, 24*time.Hour)
	check("H.LeaseTTL", byFunc["H"].LeaseTTL, 10*time.Second)
	check("H.LeaseWait", byFunc["H"].LeaseWait, 2*time.Second)
	check("I.Key", byFunc["I"].Key[0].Text, "pair(a, b)")
	check("I.Prefix default", byFunc["I"].ProviderPrefix, "app.I")
	check("J.N default", byFunc["J"].N, directive.IntOrExpr{IsLit: true, Lit: 1})
	check("A.N unset", byFunc["A"].N, directive.IntOrExpr{})
}

// Positions are exact: each key expression points at its first character in the file.
func TestParseFile_KeyExpressionPositions(t *testing.T) {
	t.Parallel()
	src := header + "//once:forever key=a.ID,b  \"fingerprint=x, y\"\nfunc F(ctx context.Context, a A, b int, x, y string) error { return nil }\n"
	fset := token.NewFileSet()
	f, err := parser.ParseFile(fset, "a.go", src, parser.ParseComments)
	if err != nil {
		t.Fatal(err)
	}
	ds, errs := directive.ParseFile(fset, f)
	if len(errs) > 0 || len(ds) != 1 {
		t.Fatalf("got %v, %v", ds, errs)
	}
	line := "//once:forever key=a.ID,b  \"fingerprint=x, y\""
	for _, e := range append(ds[0].Key, ds[0].Fingerprint...) {
		col := fset.Position(e.Pos).Column
		if got := line[col-1 : col-1+len(e.Text)]; got != e.Text {
			t.Errorf("expression %q at column %d, where the line has %q", e.Text, col, got)
		}
	}
}

func TestParseFile_TableForms(t *testing.T) {
	t.Parallel()
	src := header + `
//once:open table=jobs columns=dedupe_key status=status open=pending,running
func EnqueueJob(ctx context.Context, tx Tx, job Job) (JobID, error) { return 0, nil }

//once:forever table=billing.charges columns=org_id,day nulls=notdistinct
func Charge(ctx context.Context, tx Tx) error { return nil }

//once:episode table=alerts columns=rule_id latch=fired_at
func Fire(ctx context.Context, tx Tx) error { return nil }

//once:statement table=quota columns=org_id,day counter=used cap=100
func Use(ctx context.Context, tx Tx) error { return nil }

//once:open table=runs columns=org_id status=state open=queued
func StartRun(ctx context.Context, tx Tx) error { return nil }
`
	ds, errs := parse(t, src)
	if len(errs) > 0 {
		t.Fatalf("errors: %v", errs)
	}
	want := []struct{ index, def, conflict string }{
		{"jobs_dedupe_key_once_open",
			"CREATE UNIQUE INDEX jobs_dedupe_key_once_open ON public.jobs USING btree (dedupe_key) WHERE (status = ANY (ARRAY['pending'::text, 'running'::text]))",
			"ON CONFLICT (dedupe_key) WHERE status IN ('pending', 'running') DO NOTHING"},
		{"charges_org_id_day_once_forever",
			"CREATE UNIQUE INDEX charges_org_id_day_once_forever ON billing.charges USING btree (org_id, day) NULLS NOT DISTINCT",
			"ON CONFLICT (org_id, day) DO NOTHING"},
		{"alerts_rule_id_once_episode",
			"CREATE UNIQUE INDEX alerts_rule_id_once_episode ON public.alerts USING btree (rule_id)",
			"ON CONFLICT (rule_id) DO UPDATE SET fired_at = clock_timestamp() WHERE alerts.fired_at IS NULL"},
		{"quota_org_id_day_once_statement",
			"CREATE UNIQUE INDEX quota_org_id_day_once_statement ON public.quota USING btree (org_id, day)",
			"ON CONFLICT (org_id, day) DO UPDATE SET used = quota.used + EXCLUDED.used WHERE quota.used + EXCLUDED.used <= 100"},
		{"runs_org_id_once_open",
			"CREATE UNIQUE INDEX runs_org_id_once_open ON public.runs USING btree (org_id) WHERE (state = 'queued'::text)",
			"ON CONFLICT (org_id) WHERE state IN ('queued') DO NOTHING"},
	}
	for i, w := range want {
		d := ds[i]
		if d.IndexName() != w.index || d.IndexDef() != w.def || d.ConflictClause() != w.conflict {
			t.Errorf("%s:\n got %s\n     %s\n     %s\nwant %s\n     %s\n     %s", d.Func.Name.Name,
				d.IndexName(), d.IndexDef(), d.ConflictClause(), w.index, w.def, w.conflict)
		}
	}
	// The rows each index covers: its predicate's, and where nulls are distinct, none with a
	// null in the key (cmd/oncegen runs these on a table holding duplicates).
	dups := []string{
		"SELECT dedupe_key, count(*) FROM public.jobs WHERE (status = ANY (ARRAY['pending'::text, 'running'::text])) AND dedupe_key IS NOT NULL GROUP BY dedupe_key HAVING count(*) > 1;",
		"SELECT org_id, day, count(*) FROM billing.charges GROUP BY org_id, day HAVING count(*) > 1;",
		"SELECT rule_id, count(*) FROM public.alerts WHERE rule_id IS NOT NULL GROUP BY rule_id HAVING count(*) > 1;",
		"SELECT org_id, day, count(*) FROM public.quota WHERE org_id IS NOT NULL AND day IS NOT NULL GROUP BY org_id, day HAVING count(*) > 1;",
		"SELECT org_id, count(*) FROM public.runs WHERE (state = 'queued'::text) AND org_id IS NOT NULL GROUP BY org_id HAVING count(*) > 1;",
	}
	for i, want := range dups {
		if got := ds[i].DuplicatesQuery(); got != want {
			t.Errorf("%s's duplicates query:\n got %s\nwant %s", ds[i].Func.Name.Name, got, want)
		}
	}
}

func TestShortName_StableAndUnder63Bytes(t *testing.T) {
	t.Parallel()
	long := strings.Repeat("a", 40) + "_" + strings.Repeat("b", 40) + "_once_forever"
	other := strings.Repeat("a", 40) + "_" + strings.Repeat("b", 40) + "_once_episode"
	s1, s2 := directive.ShortName(long), directive.ShortName(other)
	if len(s1) > 63 || len(s2) > 63 {
		t.Fatalf("too long: %q (%d), %q (%d)", s1, len(s1), s2, len(s2))
	}
	if s1 == s2 {
		t.Fatalf("two names shorten to the same %q", s1)
	}
	if directive.ShortName(long) != s1 {
		t.Fatal("ShortName is not stable")
	}
	if got := directive.ShortName("jobs_key_once_open"); got != "jobs_key_once_open" {
		t.Fatalf("a short name changed: %q", got)
	}
}

// Every generated name is exported exactly when the function it comes from is, and reads as
// Go's own names do (rearmSendTriggeredAlert, not RearmsendTriggeredAlert).
func TestGeneratedNames_FollowTheExportRuleOfTheirFunction(t *testing.T) {
	t.Parallel()
	for _, c := range []struct{ fn, wrapper, rearm, conflict string }{
		{"SendWelcome", "SendWelcomeOnce", "RearmSendWelcome", "SendWelcomeConflict"},
		{"sendTriggeredAlert", "sendTriggeredAlertOnce", "rearmSendTriggeredAlert", "sendTriggeredAlertConflict"},
		{"f", "fOnce", "rearmF", "fConflict"},
		{"_f", "_fOnce", "rearm_f", "_fConflict"},
		{"écrire", "écrireOnce", "rearmÉcrire", "écrireConflict"},
		{"Écrire", "ÉcrireOnce", "RearmÉcrire", "ÉcrireConflict"},
		{"世界", "世界Once", "rearm世界", "世界Conflict"},
	} {
		got := [3]string{directive.WrapperName(c.fn), directive.RearmName(c.fn), directive.ConflictName(c.fn)}
		if want := [3]string{c.wrapper, c.rearm, c.conflict}; got != want {
			t.Errorf("%s: wrapper, rearm, conflict = %q, want %q", c.fn, got, want)
		}
		for _, name := range got {
			if token.IsExported(name) != token.IsExported(c.fn) {
				t.Errorf("%s: generated %s, exported %t: want exported %t as the function is", c.fn, name, token.IsExported(name), token.IsExported(c.fn))
			}
			if !token.IsIdentifier(name) {
				t.Errorf("%s: generated %q, not an identifier", c.fn, name)
			}
		}
	}
}

// Each class of mistake: the position (line:col) and the message, as both tools print them.
func TestParseFile_Errors(t *testing.T) {
	t.Parallel()
	fn := "\nfunc F(ctx context.Context, u User) error { return nil }\n"
	cases := []struct {
		name, src, want string
	}{
		{"unknown kind", "//once:forver key=u.ID" + fn,
			`a.go:5:8: unknown kind "forver": did you mean //once:forever? (kinds: request, transaction, lease, open, episode, statement, provider, forever)`},
		{"upper-case kind", "//once:Forever key=u.ID" + fn,
			`a.go:5:8: unknown kind "Forever": did you mean //once:forever? (kinds: request, transaction, lease, open, episode, statement, provider, forever)`},
		{"no kind", "//once:" + fn,
			`a.go:5:1: //once: needs a kind right after the colon: one of request, transaction, lease, open, episode, statement, provider, forever`},
		{"unknown argument", "//once:forever key=u.ID retian=24h" + fn,
			`a.go:5:25: //once:forever: unknown argument retian=: did you mean retain=? (arguments: columns, fingerprint, key, name, nulls, repeat, result, retain, scope, seal, stale, table, wait)`},
		{"argument of another kind", "//once:request key=u.ID ttl=1s" + fn,
			`a.go:5:25: //once:request takes no ttl= argument (lease, provider does; arguments of request: key, name)`},
		{"repeated argument", "//once:forever key=u.ID key=u.Email" + fn,
			`a.go:5:25: //once:forever: key= given twice (first at column 16): give it once`},
		{"missing argument", "//once:lease key=u.ID" + fn,
			`a.go:5:1: //once:lease on F: missing ttl= (for example ttl=10s)`},
		{"missing key", "//once:forever retain=1h" + fn,
			`a.go:5:1: //once:forever on F: missing key= (for example key=order.ID)`},
		{"bad duration", "//once:lease key=u.ID ttl=10" + fn,
			`a.go:5:27: //once:lease: ttl=10: not a duration (write it like 10s, 5m or 24h)`},
		{"negative duration", "//once:lease key=u.ID ttl=-1s" + fn,
			`a.go:5:27: //once:lease: ttl=-1s: must be a positive duration`},
		{"bad number", "//once:statement key=u.ID cap=0" + fn,
			`a.go:5:31: //once:statement: cap=0: must be a positive integer`},
		{"overflowing number", "//once:statement key=u.ID cap=99999999999999999999" + fn,
			`a.go:5:31: //once:statement: cap=99999999999999999999: must be a positive integer`},
		{"bad bool", "//once:transaction key=u.ID wait=no" + fn,
			`a.go:5:34: //once:transaction: wait=no: must be true or false`},
		{"bad enum", "//once:forever key=u.ID repeat=always" + fn,
			`a.go:5:32: //once:forever: repeat=always: the only value is repeat=safe`},
		{"bad result", "//once:forever key=u.ID result=secret" + fn,
			`a.go:5:32: //once:forever: result=secret: must be one of value, none, digest`},
		{"not arg=value", "//once:forever u.ID" + fn,
			`a.go:5:16: //once:forever: "u.ID" is not an arg=value argument (arguments: columns, fingerprint, key, name, nulls, repeat, result, retain, scope, seal, stale, table, wait)`},
		{"bad key expression", "//once:forever key=u.ID,u..x" + fn,
			`a.go:5:27: //once:forever: key=: "u..x" is not a Go expression: expected selector or type assertion, found '.'`},
		{"unbalanced key", "//once:forever key=f(u" + fn,
			`a.go:5:20: //once:forever: key=f(u: unbalanced brackets or quotes`},
		{"empty key part", "//once:forever key=u.ID," + fn,
			`a.go:5:25: //once:forever: key= has an empty expression`},
		{"bad quote", "//once:forever \"key=u.ID" + fn,
			`a.go:5:16: //once:forever: unterminated or misplaced quote: quote a whole argument, as in "key=a, b"`},
		{"two directives", "//once:forever key=u.ID\n//once:request key=u.ID" + fn,
			`a.go:6:1: a second //once: directive on F (//once:forever is at line 5): a function keeps one promise; remove one`},
		{"two directives, first invalid", "//once:forever key=u.ID ttl=1s\n//once:request key=u.ID" + fn,
			`a.go:5:25: //once:forever takes no ttl= argument (lease, provider does; arguments of forever: columns, fingerprint, key, name, nulls, repeat, result, retain, scope, seal, stale, table, wait)
a.go:6:1: a second //once: directive on F (another is at line 5): a function keeps one promise; remove one`},
		{"on a type", "//once:forever key=u.ID\ntype T struct{}\n",
			`a.go:5:1: //once:forever is on a type declaration, not a function: put it in the doc comment of the function whose effect it guards`},
		{"on a var", "var (\n\t//once:forever key=u.ID\n\tV int\n)\n",
			`a.go:6:2: //once:forever is on a var declaration, not a function: put it in the doc comment of the function whose effect it guards`},
		{"floating", "//once:forever key=u.ID\n\n" + fn,
			`a.go:5:1: //once:forever is not in a function's doc comment: put it on the lines just above the func whose effect it guards`},
		{"inside a body", "func G() {\n\t//once:forever key=u.ID\n}\n",
			`a.go:6:2: //once:forever is not in a function's doc comment: put it on the lines just above the func whose effect it guards`},
		{"space after slashes", "// once:forever key=u.ID" + fn,
			`a.go:5:1: write //once:forever with no space after //: as written it is a plain comment and guards nothing`},
		{"key with table", "//once:forever table=t columns=a key=u.ID" + fn,
			`a.go:5:34: //once:forever: key= and table= exclude each other: with table=, name the key columns with columns=`},
		{"table on a kind without", "//once:lease table=t columns=a ttl=1s" + fn,
			`a.go:5:14: //once:lease has no table= form (kinds with one: open, episode, statement, forever)`},
		{"column argument without table", "//once:open key=u.ID status=state" + fn,
			`a.go:5:22: //once:open: status= needs table= (it names part of the table the function inserts into)`},
		{"key-form argument with table", "//once:open table=t columns=a status=s open=x stale=1m" + fn,
			`a.go:5:47: //once:open: stale= does not apply with table=: the promise lives on the table's rows and index`},
		{"missing table arguments", "//once:open table=jobs columns=k" + fn,
			"a.go:5:1: //once:open on F: missing status= (for example status=status)\na.go:5:1: //once:open on F: missing open= (for example open=pending,running)"},
		{"injected table", "//once:forever table=jobs;drop columns=a" + fn,
			`a.go:5:22: //once:forever: table=jobs;drop: not a plain SQL identifier (lower-case letters, digits and _, not starting with a digit)`},
		{"injected status", "//once:open table=jobs columns=k \"status=s'); drop table x; --\" open=a" + fn,
			`a.go:5:42: //once:open: status=s'); drop table x; --: not a plain SQL identifier (lower-case letters, digits and _, not starting with a digit)`},
		{"injected open value", "//once:open table=jobs columns=k status=s open=a,b'c" + fn,
			`a.go:5:48: //once:open: open=a,b'c: "b'c" is not a plain value (letters, digits, _ . : - only)`},
		{"keyword column", "//once:forever table=jobs columns=user" + fn,
			`a.go:5:35: //once:forever: columns=user: column "user": a PostgreSQL keyword: rename the column, or it must be quoted everywhere`},
		{"repeated column", "//once:forever table=jobs columns=a,b,a" + fn,
			`a.go:5:35: //once:forever: columns=a,b,a: column a is listed twice`},
		{"cap expression in table form", "//once:statement table=q columns=a counter=used cap=n" + fn,
			`a.go:5:53: //once:statement: cap=n: must be an integer literal here (it is written into the table's SQL)`},
		{"bad name", "//once:forever key=u.ID \"name=a b\"" + fn,
			`a.go:5:31: //once:forever: name=a b: a guard name is letters, digits and _ . : / - only, at most 128 bytes`},
		{"long identifier", "//once:forever table=" + strings.Repeat("t", 64) + " columns=a" + fn,
			`a.go:5:22: //once:forever: table=` + strings.Repeat("t", 64) + `: an identifier is at most 63 bytes`},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			ds, errs := parse(t, header+c.src)
			var got []string
			for _, e := range errs {
				got = append(got, e.Error())
			}
			if strings.Join(got, "\n") != c.want {
				t.Errorf("errors:\n%s\nwant:\n%s", strings.Join(got, "\n"), c.want)
			}
			if c.name != "two directives" && c.name != "two directives, first invalid" && len(ds) != 0 {
				t.Errorf("a directive with a mistake was returned: %+v", ds[0])
			}
		})
	}
}

// A function with an invalid directive is left out, and other functions in the file are not.
func TestParseFile_OneBadDirectiveLeavesOthers(t *testing.T) {
	t.Parallel()
	ds, errs := parse(t, header+`
//once:forever key=u.ID
func A(ctx context.Context, u User) error { return nil }

//once:forever kee=u.ID
func B(ctx context.Context, u User) error { return nil }
`)
	if len(errs) != 1 || len(ds) != 1 || ds[0].Func.Name.Name != "A" {
		t.Fatalf("got %d directives, errors %v", len(ds), errs)
	}
}

func TestKindRank_ShortestFirst(t *testing.T) {
	t.Parallel()
	for i, k := range directive.Kinds {
		if k.Rank() != i {
			t.Errorf("%s.Rank() = %d, want %d", k, k.Rank(), i)
		}
		if k.Promise() == "unknown" {
			t.Errorf("%s has no promise text", k)
		}
	}
	if directive.Kind("x").Rank() != -1 {
		t.Error("unknown kind has a rank")
	}
}
