package faults

import (
	"fmt"
	"sort"
	"strings"
)

// audited is the operator actions that write an audit row, with the state each resolution
// leaves its operation in.
var audited = map[string]string{
	"resolve done": "done", "resolve failed": "failed", "resolve retry": "released",
	"force-release": "", "rearm": "", "refund": "", "reset": "", "revive": "", "revive again": "",
}

// unitsGivenBack bounds, per statement key, the units the operator loop gave back: those of
// the refunds and resets that were applied, and at most those of the ones whose answer was
// lost (a refund of more than the cap is refused whatever the key holds).
func unitsGivenBack(calls []Call) map[string]int64 {
	out := map[string]int64{}
	for _, c := range calls {
		if c.Kind != "operator" || c.Status == "refused" || (c.Status != "applied" && c.Err == "") {
			continue
		}
		switch {
		case c.Action == "refund" && c.N <= statementCap:
			out[c.Key] += c.N
		case c.Action == "reset" && c.Status == "applied":
			out[c.Key] += c.Count
		case c.Action == "reset":
			out[c.Key] += statementCap
		}
	}
	return out
}

// forcedReleases lists, per lease key, the operator's forced releases that may have
// committed (applied, or whose answer was lost).
func forcedReleases(calls []Call) map[string][]Call {
	out := map[string][]Call{}
	for _, c := range calls {
		if c.Kind == "operator" && c.Action == "force-release" && c.Status != "refused" {
			out[c.Key] = append(out[c.Key], c)
		}
	}
	return out
}

// forcedFree says whether one of the forced releases was made while prev ran and before cur
// began: the documented way two holders' runs overlap when the earlier one's next Release,
// which would have told it (ErrNotOwner), did not reach the database.
func forcedFree(releases []Call, prev, cur Effect) bool {
	for _, r := range releases {
		if r.Start.Before(cur.Start) && r.End.After(prev.Start) {
			return true
		}
	}
	return false
}

// checkOperator states the invariants of the operator's actions.
func checkOperator(calls []Call, effects []Effect, faults []Fault, f Final) []Violation {
	var out []Violation
	report := func(inv, key, detail string, cs []Call, es []Effect) {
		out = append(out, Violation{Invariant: inv, Key: key, Detail: detail, Calls: cs, Effects: es, Faults: overlapping(faults, cs)})
	}
	forced := forcedReleases(calls)
	rows := map[int][]AuditRow{}
	for _, a := range f.Audit {
		rows[a.Call] = append(rows[a.Call], a)
	}
	callOf := map[int]Call{}
	for _, c := range calls {
		callOf[c.ID] = c
	}
	// The keys' effects and forever calls, indexed once: a long run has millions.
	byKey := map[string][]Effect{}
	for _, e := range effects {
		if e.Kind == "forever" || e.Kind == "lease" {
			byKey[e.Kind+" "+e.Key] = append(byKey[e.Kind+" "+e.Key], e)
		}
	}
	for _, es := range byKey {
		sort.Slice(es, func(i, j int) bool { return es[i].Start.Before(es[j].Start) })
	}
	effectsOf := func(kind, key string) []Effect { return byKey[kind+" "+key] }
	foreverCalls := map[string][]Call{}
	for _, c := range calls {
		if c.Kind == "forever" {
			foreverCalls[c.Key] = append(foreverCalls[c.Key], c)
		}
	}

	for _, c := range calls {
		if c.Kind != "operator" {
			continue
		}
		state, isAudited := audited[c.Action]
		committed := c.Status == "applied" || len(rows[c.ID]) > 0

		// audit-committed: the row and the change, together or not at all.
		if isAudited {
			switch n := len(rows[c.ID]); {
			case c.Status == "applied" && n != 1:
				report("audit-committed", c.Key, fmt.Sprintf("call %d's %s was applied, and has %d audit rows", c.ID, c.Action, n), []Call{c}, nil)
			case c.Status == "refused" && n != 0:
				report("audit-committed", c.Key, fmt.Sprintf("call %d's %s was refused (%s), and has %d audit rows", c.ID, c.Action, c.Err, n), []Call{c}, nil)
			case n > 1:
				report("audit-committed", c.Key, fmt.Sprintf("call %d's %s has %d audit rows", c.ID, c.Action, n), []Call{c}, nil)
			}
			for _, a := range rows[c.ID] {
				if d := auditShowsChange(c, a, state); d != "" {
					report("audit-committed", c.Key, fmt.Sprintf("call %d's audit row (%s of %s): %s", c.ID, a.Action, a.Target, d), []Call{c}, nil)
				}
			}
		}

		switch {
		case c.Repeat:
			// resolve-refused: the operation was settled when this call was made.
			if c.Status == "applied" || len(rows[c.ID]) > 0 {
				report("resolve-refused", c.Key, fmt.Sprintf("call %d's %s of settled operation %s was applied (%d audit rows)", c.ID, c.Action, c.Target, len(rows[c.ID])), []Call{c}, nil)
			}
		case (c.Action == "resolve done" || c.Action == "resolve failed") && committed:
			// resolved-kept: nothing of the key runs after the resolution; it answers as resolved.
			for _, e := range effectsOf("forever", c.Key) {
				// A call made after the resolution's answer, not a holder of the old claim
				// still running (told at its settle that it lost the claim).
				if callOf[e.Call].Start.After(c.End) {
					report("resolved-kept", "forever "+c.Key, fmt.Sprintf("operation %s was resolved %s by call %d, and call %d ran it after", c.Target, state, c.ID, e.Call), []Call{c, callOf[e.Call]}, []Effect{e})
				}
			}
			for _, d := range foreverCalls[c.Key] {
				if d.Start.After(c.End) && d.Err == "" && d.Status == "duplicate" && state == "done" && d.Value != c.Value {
					report("resolved-kept", "forever "+c.Key, fmt.Sprintf("call %d got %q after call %d resolved it done with %q", d.ID, d.Value, c.ID, c.Value), []Call{c, d}, nil)
				}
			}
			op, found := f.Operations[c.Key]
			switch {
			case !found || op.State != state:
				cs, es := []Call{c}, effectsOf("forever", c.Key)
				for _, d := range foreverCalls[c.Key] {
					if d.Status != "duplicate" && d.Status != "in_flight" {
						cs = append(cs, d)
					}
				}
				report("resolved-kept", "forever "+c.Key, fmt.Sprintf("call %d resolved it %s, the key is %q (its audit: %s)", c.ID, state, op.State, auditText(rows[c.ID])), cs, es)
			case state == "done" && op.Result != jsonString(c.Value):
				report("resolved-kept", "forever "+c.Key, fmt.Sprintf("call %d resolved it done with %q, the key holds %s (its audit: %s)", c.ID, c.Value, op.Result, auditText(rows[c.ID])), []Call{c}, nil)
			}
		case c.Action == "refund" && c.N > statementCap && c.Status == "applied":
			report("refund-bounded", "statement "+c.Key, fmt.Sprintf("call %d's refund of %d units, over the cap of %d, was applied", c.ID, c.N, statementCap), []Call{c}, nil)
		case c.Action == "force-release" && committed:
			releaseFence(c, forced[c.Key], effectsOf("lease", c.Key), callOf, report)
		}
	}
	return out
}

// auditShowsChange says what is wrong with an audit row of call c (a resolution leaves its
// operation in state), or "" when its after shows the change the action makes. A
// resolution locks its row from before to after; a forced release or a rearm of a lease or
// latch that was free changes nothing, and a holder may take it between the statements, so
// their rows' after shows nothing certain.
func auditShowsChange(c Call, a AuditRow, state string) string {
	switch {
	case strings.HasPrefix(c.Action, "resolve"):
		if a.After == nil || a.After["state"] != state {
			return fmt.Sprintf("after is %v, not %s", a.After["state"], state)
		}
	case c.Action == "revive":
		// A revive locks the row from before to after.
		if a.After == nil || a.After["state"] != "pending" {
			return fmt.Sprintf("after is %v, not pending", a.After["state"])
		}
	case c.Action == "refund" || c.Action == "reset":
		for _, side := range []map[string]any{a.Before, a.After} {
			if used, _ := side["used"].(float64); used > statementCap {
				return fmt.Sprintf("%v units held, over the cap of %d", used, statementCap)
			}
		}
	}
	return ""
}

// releaseFence states release-fence for the forced release r over the key's effects,
// sorted by start.
func releaseFence(r Call, releases []Call, es []Effect, callOf map[int]Call, report func(inv, key, detail string, cs []Call, es []Effect)) {
	var before int64
	var held Effect // the holder running when the release was made
	for _, e := range es {
		if e.Start.Before(r.Start) {
			before = max(before, e.Fence)
			if e.End.IsZero() || e.End.After(r.Start) {
				held = e
			}
		}
	}
	var entrants []Effect
	for _, e := range es {
		// Holders that took the lease after the release's answer: not an earlier holder's
		// run that began late.
		if callOf[e.Call].Start.After(r.End) && e.Fence <= before {
			report("release-fence", "lease "+r.Key, fmt.Sprintf("call %d held it with fence %d after call %d's forced release, with fence %d before it", e.Call, e.Fence, r.ID, before), []Call{r, callOf[e.Call]}, []Effect{e})
		}
		if held.Call != 0 && e.Start.After(r.Start) && (held.End.IsZero() || e.Start.Before(held.End)) {
			entrants = append(entrants, e)
		}
	}
	if len(entrants) >= 2 {
		a, b := entrants[0], entrants[1]
		if (a.End.IsZero() || b.Start.Before(a.End)) && !callOf[a.Call].NotOwner && !forcedFree(releases, a, b) {
			report("release-fence", "lease "+r.Key, fmt.Sprintf("calls %d and %d both took it while call %d still ran after call %d's forced release", a.Call, b.Call, held.Call, r.ID), []Call{r, callOf[held.Call], callOf[a.Call], callOf[b.Call]}, []Effect{held, a, b})
		}
	}
}

// auditText shows audit rows' before and after, for a violation's detail.
func auditText(rows []AuditRow) string {
	var b strings.Builder
	for _, a := range rows {
		fmt.Fprintf(&b, "[%s of %s: before %v, after %v]", a.Action, a.Target, a.Before, a.After)
	}
	return b.String()
}
