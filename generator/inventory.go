package generator

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/oncekit/once/internal/directive"
)

// Entry is one declared promise as the inventory shows it.
type Entry struct {
	Kind      string `json:"kind"`
	Promise   string `json:"promise"`
	Guard     string `json:"guard"`
	Func      string `json:"func"`
	Wrapper   string `json:"wrapper"`
	Key       string `json:"key"`
	Mechanism string `json:"mechanism"`
	Table     string `json:"table,omitempty"`
	Index     string `json:"index,omitempty"`
	Position  string `json:"position"`
}

// Inventory lists every guard side by side, from the shortest promise to the longest, then by
// guard name; positions are relative to base.
func Inventory(guards []*Guard, base string) []Entry {
	out := make([]Entry, 0, len(guards))
	for _, g := range guards {
		e := Entry{
			Kind:      string(g.Kind),
			Promise:   g.Kind.Promise(),
			Guard:     g.Name,
			Func:      g.PkgPath + "." + g.FuncName(),
			Wrapper:   g.Wrapper(),
			Key:       g.KeyText(),
			Mechanism: Mechanism(g.Directive),
			Position:  position(g.Position, base),
		}
		if g.HasTable() {
			e.Table, e.Index = g.QualifiedTable(), g.IndexName()
		}
		out = append(out, e)
	}
	sort.SliceStable(out, func(i, j int) bool {
		a, b := directive.Kind(out[i].Kind).Rank(), directive.Kind(out[j].Kind).Rank()
		if a != b {
			return a < b
		}
		if out[i].Guard != out[j].Guard {
			return out[i].Guard < out[j].Guard
		}
		return out[i].Position < out[j].Position
	})
	return out
}

// Mechanism says in a few words what keeps d's promise.
func Mechanism(d *directive.Directive) string {
	if d.HasTable() {
		switch d.Kind {
		case directive.Open:
			return fmt.Sprintf("partial unique index on %s while %s IN (%s); the insert is the check", d.Table, d.Status, strings.Join(d.OpenValues, ", "))
		case directive.Episode:
			return fmt.Sprintf("latch column %s.%s set only where NULL, unique index", d.Table, d.Latch)
		case directive.Statement:
			return fmt.Sprintf("counter column %s.%s grown within cap %d, unique index", d.Table, d.Counter, d.Cap.Lit)
		default:
			s := "unique index on " + d.Table
			if d.NullsNotDistinct {
				s += " (NULLS NOT DISTINCT)"
			}
			return s + "; the insert is the check"
		}
	}
	switch d.Kind {
	case directive.Request:
		return "memo in the request's context"
	case directive.Transaction:
		s := "64-bit advisory transaction lock"
		if d.NoWait {
			s += ", busy instead of waiting"
		}
		if d.Timeout > 0 {
			s += ", lock timeout " + shortDuration(d.Timeout)
		}
		return s
	case directive.Statement:
		c := d.Cap.Expr.Text
		if d.Cap.IsLit {
			c = fmt.Sprint(d.Cap.Lit)
		}
		n := d.N.Expr.Text
		if d.N.IsLit {
			n = fmt.Sprint(d.N.Lit)
		}
		return fmt.Sprintf("units as rows of once.counter_slots: reserve %s below cap %s in one statement", n, c)
	case directive.Episode:
		return "latch in once.latches, set only where NULL; Rearm" + d.Func.Name.Name + " rearms"
	case directive.Open:
		return "claim in once.open_claims under a partial unique index; stale after " + staleText(d.Stale) + " with no sign of life"
	case directive.Forever:
		s := "unique claim in once.operations, outcome recorded"
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
	case directive.Provider:
		s := fmt.Sprintf("provider idempotency key %q + key", d.ProviderPrefix+"-")
		if d.TTL > 0 {
			s += ", provider window " + shortDuration(d.TTL)
		}
		return s
	case directive.Lease:
		s := "lease row in once.leases with owner token, ttl " + shortDuration(d.TTL)
		if d.Wait > 0 {
			s += ", waits " + shortDuration(d.Wait)
		}
		return s
	}
	return ""
}

// InventoryMarkdown renders entries as a Markdown table, for review or a PR comment.
func InventoryMarkdown(entries []Entry) []byte {
	var b bytes.Buffer
	b.WriteString("| kind | guard | key | mechanism | table / index | where |\n")
	b.WriteString("| --- | --- | --- | --- | --- | --- |\n")
	cell := func(s string) string {
		s = strings.ReplaceAll(s, "|", `\|`)
		if s == "" {
			return "—"
		}
		return s
	}
	for _, e := range entries {
		ti := ""
		if e.Table != "" {
			ti = "`" + e.Table + "` / `" + e.Index + "`"
		}
		fmt.Fprintf(&b, "| %s | `%s` | `%s` | %s | %s | %s |\n",
			e.Kind, cell(e.Guard), cell(e.Key), cell(e.Mechanism), cell(ti), cell(e.Position))
	}
	return b.Bytes()
}

// InventoryJSON renders entries as an indented JSON array.
func InventoryJSON(entries []Entry) ([]byte, error) {
	b, err := json.MarshalIndent(entries, "", "  ")
	if err != nil {
		return nil, fmt.Errorf("encoding the inventory: %w", err)
	}
	return append(b, '\n'), nil
}

// staleText is an open claim's stale window as written: stale=, or the runtime's default.
func staleText(d time.Duration) string {
	if d == 0 {
		return "45s (the runtime's default on a pool; 20m on one connection)"
	}
	return shortDuration(d)
}
