package generator

import (
	"bytes"
	"encoding/json"
	"fmt"
	"sort"
	"strings"

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
			Promise:   g.Spec().Promise,
			Guard:     g.Name,
			Func:      g.PkgPath + "." + g.FuncName(),
			Wrapper:   g.Wrapper(),
			Key:       g.KeyText(),
			Mechanism: g.Mechanism(),
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
