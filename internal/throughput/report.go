package main

import (
	"fmt"
	"io"
	"strings"
)

// Report is one run's measurements.
type Report struct {
	cfg  Config
	rows []*scenario
}

func newReport(cfg Config, scenarios []*scenario) *Report {
	return &Report{cfg: cfg, rows: scenarios}
}

// Exact reports whether every final state was as it must be.
func (r *Report) Exact() bool {
	for _, s := range r.rows {
		if len(s.problems) > 0 {
			return false
		}
	}
	return true
}

func (r *Report) find(name string) *scenario {
	for _, s := range r.rows {
		if s.name == name {
			return s
		}
	}
	return nil
}

// Print writes the report as a Markdown table: per scenario, calls per second on fresh keys
// and in storms, as ratios to (a) and to River (its unique insert for the one-statement
// guards, its insert and completion for the guards that settle), round trips and WAL bytes
// per call, and the final-state check.
func (r *Report) Print(w io.Writer) {
	floor := r.rows[0]
	ins, full := r.find("River unique insert"), r.find("River unique insert + job completion")
	fmt.Fprintf(w, "%d workers, a pool of %d connections per scenario; %d fresh keys per scenario; %d storms of %d attempts on one key; in %d interleaved rounds.\n\n",
		r.cfg.Workers, r.cfg.Conns, r.cfg.Keys, r.cfg.Rounds, r.cfg.Storm, r.cfg.Rounds)
	fmt.Fprintln(w, "| scenario | fresh /s | fresh ÷ (a) | fresh ÷ River | storm /s | storm ÷ (a) | storm ÷ River | round trips fresh / storm | WAL bytes fresh / storm | final state |")
	fmt.Fprintln(w, "| --- | ---: | ---: | ---: | ---: | ---: | ---: | --- | --- | --- |")
	for _, s := range r.rows {
		river := ins
		if s.lifecycle {
			river = full
		}
		if river == nil { // River's scenarios were left out of the run
			river = &scenario{}
		}
		name := s.name
		if s.twin && s.kind != "floor" {
			name = "↳ " + name
		}
		state := "exact"
		if len(s.problems) > 0 {
			state = "**" + strings.Join(s.problems, "; ") + "**"
		}
		fmt.Fprintf(w, "| %s | %.0f | %s | %s | %.0f | %s | %s | %.2f / %.2f | %.0f / %.0f | %s |\n",
			name,
			s.fresh.perSecond(), ratio(s.fresh, floor.fresh), ratio(s.fresh, river.fresh),
			s.storm.perSecond(), ratio(s.storm, floor.storm), ratio(s.storm, river.storm),
			s.fresh.per(s.fresh.trips), s.storm.per(s.storm.trips),
			s.fresh.per(s.fresh.walBytes), s.storm.per(s.storm.walBytes),
			state)
	}
}

func ratio(a, b measure) string {
	if b.perSecond() == 0 {
		return "—"
	}
	return fmt.Sprintf("%.2f", a.perSecond()/b.perSecond())
}
