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
