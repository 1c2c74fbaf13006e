package faults

import (
	"fmt"
	"sort"
	"strconv"
	"strings"
)

// checkFollowUps states the follow-up invariants over the history, the rows of
// once.followups after the final drain, and the provider's deliveries.
func checkFollowUps(calls []Call, effects []Effect, faults []Fault, f Final) []Violation {
	var out []Violation
	// A violation's sub-history: the operation's calls, the deliveries of its follow-up, and
	// the operator's calls on it.
	opCalls, opsOn := map[string][]Call{}, map[string][]Call{}
	for _, c := range calls {
		switch {
		case c.Kind == "followup":
			opCalls[c.Key] = append(opCalls[c.Key], c)
		case c.Kind == "operator" && strings.HasPrefix(c.Action, "revive"):
			opsOn[c.Key] = append(opsOn[c.Key], c)
		}
	}
	deliveries := map[string][]Effect{}
	for _, e := range effects {
		if e.Kind == "followup-delivery" {
			deliveries[e.Key] = append(deliveries[e.Key], e)
		}
	}
	report := func(inv, key, action, detail string, only ...Call) {
		cs := only
		if cs == nil {
			cs = append(append([]Call(nil), opCalls[key]...), opsOn[key]...)
		}
		out = append(out, Violation{Invariant: inv, Key: "followup " + key + " " + action, Detail: detail,
			Calls: cs, Effects: deliveries[key+" "+action], Faults: overlapping(faults, cs)})
	}

	keys := make([]string, 0, len(f.FollowUpEffects))
	for k := range f.FollowUpEffects {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		if n := f.FollowUpEffects[k]; n > 1 {
			key, action, _ := strings.Cut(k, " ")
			report("followup-once", key, action, fmt.Sprintf("%d deliveries at the provider", n))
		}
	}

	for _, c := range calls {
		if c.Kind != "followup" || c.Status != "ran" || c.Err != "" {
			continue
		}
		for _, action := range strings.Split(c.Value, ",") {
			if _, ok := f.FollowUps[c.Key+" "+action]; !ok {
				report("followup-delivered", c.Key, action, fmt.Sprintf("call %d was told ran having enqueued %s, and the operation has no such follow-up", c.ID, action), c)
			}
		}
	}
	rows := make([]string, 0, len(f.FollowUps))
	byID := map[string]string{}
	for k, r := range f.FollowUps {
		rows = append(rows, k)
		byID[strconv.FormatInt(r.ID, 10)] = k
	}
	sort.Strings(rows)
	for _, k := range rows {
		r := f.FollowUps[k]
		key, action, _ := strings.Cut(k, " ")
		switch {
		case r.State == "delivered" && f.FollowUpEffects[k] != 1:
			report("followup-delivered", key, action, fmt.Sprintf("follow-up %d is marked delivered after %d deliveries at the provider", r.ID, f.FollowUpEffects[k]))
		case r.State == "dead" && action != followUpDoomed:
			report("followup-delivered", key, action, fmt.Sprintf("follow-up %d, whose deliveries succeed, is dead after %d attempts: %s", r.ID, r.Attempts, r.LastError))
		case r.State == "pending":
			report("followup-bound", key, action, fmt.Sprintf("follow-up %d is still pending %s after recovery (attempts %d, last error %q)", r.ID, followUpBound(), r.Attempts, r.LastError))
		}
	}

	rowsOf := map[int][]AuditRow{}
	for _, a := range f.Audit {
		rowsOf[a.Call] = append(rowsOf[a.Call], a)
	}
	for _, c := range calls {
		if c.Kind != "operator" {
			continue
		}
		committed := c.Status == "applied" || len(rowsOf[c.ID]) > 0
		switch {
		case c.Action == "revive again" && committed:
			report("followup-revived", c.Key, followUpDoomed, fmt.Sprintf("call %d revived follow-up %s again, after it was revived, and it was applied (%d audit rows)", c.ID, c.Target, len(rowsOf[c.ID])), c)
		case c.Action == "revive" && committed:
			k, found := byID[c.Target]
			switch {
			case !found:
				report("followup-revived", c.Key, followUpDoomed, fmt.Sprintf("call %d revived follow-up %s, which is gone", c.ID, c.Target))
			case f.FollowUps[k].State != "delivered" || f.FollowUpEffects[k] != 1:
				report("followup-revived", c.Key, followUpDoomed, fmt.Sprintf("call %d revived follow-up %s, which is %s after %d deliveries at the provider (%s)",
					c.ID, c.Target, f.FollowUps[k].State, f.FollowUpEffects[k], f.FollowUps[k].LastError))
			}
		}
	}
	return out
}
