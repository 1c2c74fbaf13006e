// Package tally prints what a story left behind, an example app beside its naive twin, as a
// small table: the output of an example's TestStory under go test -v.
//
// A table cannot hold a number the test has not checked: each cell is entered with the
// count the test made and the count it expects (Is), and a cell whose count differs fails
// the test as it is entered. So the table is the story's assertions, printed.
//
//	tab := tally.New(t, "Never paying twice", "ideas", "naive")
//	tab.Scene("32 presses of the button at once")
//	tab.Row("runs created", tally.Is(app.runs(), 1), tally.Is(twin.runs(), 32))
//	tab.Print()
package tally

import (
	"fmt"
	"strings"
	"testing"
	"unicode/utf8"
)

// Cell is one count in a row: what the test counted, checked against what it expected.
type Cell struct {
	text string // what the table shows
	ok   bool
	want string
}

// Is is a cell holding got, which the test expects to equal want.
func Is[T comparable](got, want T) Cell {
	return Cell{text: fmt.Sprint(got), ok: got == want, want: fmt.Sprint(want)}
}

// AtLeast is a cell holding got, which the test expects to be least or more: for a count
// that races on the clock (a key made from time.Now can repeat), where only "more than one"
// is certain.
func AtLeast(got, least int) Cell {
	return Cell{text: fmt.Sprint(got), ok: got >= least, want: fmt.Sprintf("at least %d", least)}
}

// None is a cell for a column the row does not apply to (the naive twin has no lock to
// hold, say). It shows a dash.
func None() Cell { return Cell{text: "-", ok: true} }

// Table is a story's counted effects, one column per app.
type Table struct {
	t       testing.TB
	title   string
	columns []string
	lines   []line
}

// line is a scene's heading (cells nil) or a row.
type line struct {
	label string
	cells []string
}

// New returns an empty table with a title and one column per app (the example, its naive
// twin).
func New(t testing.TB, title string, columns ...string) *Table {
	return &Table{t: t, title: title, columns: columns}
}

// Scene starts a part of the story: the rows after it are what it left behind.
func (tb *Table) Scene(what string) {
	tb.lines = append(tb.lines, line{label: what})
}

// Row adds a counted effect, one cell per column, and fails the test for each cell whose
// count is not the one expected.
func (tb *Table) Row(what string, cells ...Cell) {
	tb.t.Helper()
	if len(cells) != len(tb.columns) {
		tb.t.Fatalf("tally: row %q has %d cells for %d columns", what, len(cells), len(tb.columns))
	}
	scene := ""
	for i := len(tb.lines) - 1; i >= 0; i-- {
		if tb.lines[i].cells == nil {
			scene = tb.lines[i].label + ": "
			break
		}
	}
	texts := make([]string, len(cells))
	for i, c := range cells {
		texts[i] = c.text
		if !c.ok {
			tb.t.Errorf("%s%s, %s: counted %s, want %s", scene, what, tb.columns[i], c.text, c.want)
			texts[i] = c.text + " (want " + c.want + ")"
		}
	}
	tb.lines = append(tb.lines, line{label: what, cells: texts})
}

// String renders the table: the title, a header naming the columns, then each scene with
// its rows indented under it and the counts right-aligned.
func (tb *Table) String() string {
	labelWidth := 0
	widths := make([]int, len(tb.columns))
	for i, c := range tb.columns {
		widths[i] = utf8.RuneCountInString(c)
	}
	for _, l := range tb.lines {
		if l.cells == nil {
			continue
		}
		labelWidth = max(labelWidth, 2+utf8.RuneCountInString(l.label))
		for i, c := range l.cells {
			widths[i] = max(widths[i], utf8.RuneCountInString(c))
		}
	}
	var b strings.Builder
	row := func(label string, cells []string) {
		b.WriteString(label)
		b.WriteString(strings.Repeat(" ", labelWidth-utf8.RuneCountInString(label)))
		for i, c := range cells {
			b.WriteString(strings.Repeat(" ", 3+widths[i]-utf8.RuneCountInString(c)))
			b.WriteString(c)
		}
		b.WriteString("\n")
	}
	fmt.Fprintf(&b, "%s\n\n", tb.title)
	row("", tb.columns)
	for _, l := range tb.lines {
		if l.cells == nil {
			fmt.Fprintf(&b, "%s\n", l.label)
			continue
		}
		row("  "+l.label, l.cells)
	}
	return b.String()
}

// Print writes the table to the test's output: shown by go test -v, and with the failures
// when a count was not the one expected.
func (tb *Table) Print() {
	fmt.Fprintf(tb.t.Output(), "%s\n", tb.String())
}
