package main

import (
	"encoding/json"
	"strings"
	"testing"

	"github.com/oncekit/once/analyzer"
)

// joinReport is a report of two packages: one with an open call on a repeat path at
// notify.go:9:2, one declaring a type whose Deliver emails.
func joinReport(diags ...*diag) *report {
	r := &report{tests: true, diags: diags}
	var c1, c2 analyzer.Coverage
	mustUnmarshal(`{"package":"example.com/notify","open":[{"Site":"/m/notify/notify.go:9:2","Func":"notify.deliver","Via":"(notify.Sink).Deliver","Iface":["Deliver(string) error"],"Method":"Deliver","Repeat":"the retry loop of notify.deliver","RepeatAt":"/m/notify/notify.go:9:2"}]}`, &c1)
	mustUnmarshal(`{"package":"example.com/pager","impls":[{"Type":"example.com/pager.Pager","Methods":["Deliver(string) error"],"Effects":{"Deliver":[{"Site":"/m/pager/pager.go:5:9","What":"sends the email","Class":"email"}]}}]}`, &c2)
	r.cover = append(r.cover, c1, c2)
	return r
}

func TestJoin_ReportsAnOpenCallOnce(t *testing.T) {
	r := joinReport()
	r.join(false)
	if len(r.diags) != 1 || !strings.Contains(r.diags[0].Message, "call of (notify.Sink).Deliver sends the email") || r.diags[0].Posn != "/m/notify/notify.go:9:2" {
		t.Fatalf("want one finding at the open call, got %+v", r.diags)
	}
}

// A call a package already reported (its vet pass saw some implementations) is not
// reported a second time by the join.
func TestJoin_LeavesACallAPackageReported(t *testing.T) {
	vet := &diag{Posn: "/m/notify/notify.go:9:2", Category: "ONCE001", Message: "call of (notify.Sink).Deliver posts the message ..."}
	r := joinReport(vet)
	r.join(false)
	if len(r.diags) != 1 || r.diags[0] != vet {
		t.Fatalf("want the package's own finding alone, got %d findings", len(r.diags))
	}
}

func mustUnmarshal(s string, v any) {
	if err := json.Unmarshal([]byte(s), v); err != nil {
		panic(err)
	}
}

// The same open call recorded by two packages (two roots reach it) is one finding naming
// both repeats, the repeats first. Implementations are counted by type, not by site.
func TestJoin_OneFindingPerCallAndImplementationsCountedByType(t *testing.T) {
	r := joinReport()
	var again, second analyzer.Coverage
	mustUnmarshal(`{"package":"example.com/api","open":[{"Site":"/m/notify/notify.go:9:2","Func":"notify.deliver","Via":"(notify.Sink).Deliver","Iface":["Deliver(string) error"],"Method":"Deliver","Repeat":"an HTTP handler","RepeatAt":"/m/api/api.go:3:1"}]}`, &again)
	mustUnmarshal(`{"package":"example.com/pager","impls":[{"Type":"example.com/pager.Pager","Methods":["Deliver(string) error"],"Effects":{"Deliver":[{"Site":"/m/pager/pager.go:7:9","What":"sends the email","Class":"email"}]}}]}`, &second)
	r.cover = append(r.cover, again, second)
	r.join(false)
	if len(r.diags) != 1 {
		t.Fatalf("want one finding, got %d", len(r.diags))
	}
	d := r.diags[0]
	if !strings.Contains(d.Message, "2 implementations in packages it does not import perform effects") {
		t.Errorf("two sites of two types: %s", d.Message)
	}
	var msgs []string
	for _, rel := range d.Related {
		msgs = append(msgs, rel.Posn+" "+rel.Message)
	}
	want := []string{
		"/m/notify/notify.go:9:2 runs it again: the retry loop of notify.deliver",
		"/m/api/api.go:3:1 runs it again: an HTTP handler",
		"/m/pager/pager.go:5:9 an implementation's effect",
		"/m/pager/pager.go:7:9 an implementation's effect",
	}
	if strings.Join(msgs, "\n") != strings.Join(want, "\n") {
		t.Errorf("related:\n%s\nwant:\n%s", strings.Join(msgs, "\n"), strings.Join(want, "\n"))
	}
}

// An implementation's effect its own package reported, one an ignore covers, fresh content
// (but with -strict) and a type whose method has another signature do not count.
func TestJoin_CountsOnlyEffectsLeftToTheCall(t *testing.T) {
	for _, tc := range []struct {
		name, impl string
		strict     bool
		findings   int
	}{
		{"reported", `"Methods":["Deliver(string) error"],"Effects":{"Deliver":[{"Site":"/m/p.go:1:1","What":"sends","Reported":true}]}`, false, 0},
		{"ignored", `"Methods":["Deliver(string) error"],"Effects":{"Deliver":[{"Site":"/m/p.go:1:1","What":"sends","Ignored":true}]}`, false, 0},
		{"fresh", `"Methods":["Deliver(string) error"],"Effects":{"Deliver":[{"Site":"/m/p.go:1:1","What":"sends","Fresh":true}]}`, false, 0},
		{"fresh, strict", `"Methods":["Deliver(string) error"],"Effects":{"Deliver":[{"Site":"/m/p.go:1:1","What":"sends","Fresh":true}]}`, true, 1},
		{"other signature", `"Methods":["Deliver(int) error"],"Effects":{"Deliver":[{"Site":"/m/p.go:1:1","What":"sends"}]}`, false, 0},
	} {
		r := joinReport()
		r.cover = r.cover[:1]
		var c analyzer.Coverage
		mustUnmarshal(`{"package":"example.com/p","impls":[{"Type":"example.com/p.T",`+tc.impl+`}]}`, &c)
		r.cover = append(r.cover, c)
		r.join(tc.strict)
		if len(r.diags) != tc.findings {
			t.Errorf("%s: %d findings, want %d", tc.name, len(r.diags), tc.findings)
		}
	}
}

// With -strict, an open call on no repeat path is reported in -strict's words.
func TestJoin_StrictCallOffARepeatPath(t *testing.T) {
	r := joinReport()
	r.cover[0].Open[0].Repeat, r.cover[0].Open[0].RepeatAt = "", ""
	r.join(true)
	if len(r.diags) != 1 || !strings.Contains(r.diags[0].Message, "with no //once: promise (-strict): declare a promise on notify.deliver") {
		t.Fatalf("want the -strict form, got %+v", r.diags)
	}
}

func TestToolFlags_AsTheToolReadsThem(t *testing.T) {
	for _, tc := range []struct {
		flags           []string
		strict, once001 bool
	}{
		{nil, false, true},
		{[]string{"-strict=true"}, true, true},
		{[]string{"-strict=1", "-strict=false"}, false, true},
		{[]string{"-once001=false"}, false, false},
		{[]string{"-once005=true"}, false, false},
		{[]string{"-once005=true", "-once001=true"}, false, true},
	} {
		if strict, once001 := toolFlags(tc.flags); strict != tc.strict || once001 != tc.once001 {
			t.Errorf("%v: strict %v, ONCE001 %v; want %v, %v", tc.flags, strict, once001, tc.strict, tc.once001)
		}
	}
}
