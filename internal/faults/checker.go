package faults

import (
	"fmt"
	"sort"
	"strings"
	"time"
)

// Final is the state the checker compares the history with, read straight from the server
// (not through the fault proxy) after the faults stopped and the stale windows passed.
type Final struct {
	// Operations is once.operations by forever key: its state and recorded result (the
	// value's JSON text).
	Operations map[string]Operation
	// Slots is once.counter_slots' units held, by statement key.
	Slots map[string]int64
	// Decisions is the rows the transaction workload wrote, by key.
	Decisions map[string]int64
	// ProviderEffects is the fake provider's effects, by the operation key in their body.
	ProviderEffects map[string]int
	// FollowUps is the follow-up workload's rows of once.followups after the final drain,
	// by "key action"; FollowUpEffects the provider's effects of their deliveries, by the
	// same.
	FollowUps       map[string]FollowUpRow
	FollowUpEffects map[string]int
	// Audit is the operator loop's rows of once.audit, in order.
	Audit []AuditRow
	// Probes is the status a call made after recovery got, by kind and key ("forever k1"):
	// in_flight there means a key left open past its documented bound.
	Probes map[string]string
}

// Operation is one forever key's row.
type Operation struct {
	State  string
	Result string
}

// Violation is one invariant broken, with the sub-history that shows it.
type Violation struct {
	Invariant string
	Key       string
	Detail    string
	Calls     []Call
	Effects   []Effect
	Faults    []Fault
}

func (v Violation) String() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s broken on %q: %s\n", v.Invariant, v.Key, v.Detail)
	var t0 time.Time
	for _, c := range v.Calls {
		if t0.IsZero() || c.Start.Before(t0) {
			t0 = c.Start
		}
	}
	for _, e := range v.Effects {
		if t0.IsZero() || e.Start.Before(t0) {
			t0 = e.Start
		}
	}
	ms := func(t time.Time) string {
		if t.IsZero() {
			return "-"
		}
		return fmt.Sprintf("%+dms", t.Sub(t0).Milliseconds())
	}
	for _, c := range v.Calls {
		fmt.Fprintf(&b, "  call %d %s %s [%s, %s] status=%q err=%q value=%q firing=%d fence=%d count=%d\n",
			c.ID, c.Kind, c.Key, ms(c.Start), ms(c.End), c.Status, c.Err, c.Value, c.Firing, c.Fence, c.Count)
	}
	for _, e := range v.Effects {
		fmt.Fprintf(&b, "  effect of call %d [%s, %s] value=%q firing=%d fence=%d\n",
			e.Call, ms(e.Start), ms(e.End), e.Value, e.Firing, e.Fence)
	}
	for _, f := range v.Faults {
		fmt.Fprintf(&b, "  fault %s [%s, %s] %s\n", f.Kind, ms(f.Start), ms(f.End), f.Note)
	}
	return b.String()
}

// Invariants names each invariant the checker states, one line each, in the order it
// checks them.
var Invariants = []struct{ Name, Statement string }{
	{"forever-once", "at most one effect per forever key (the follow-up workload's operations too) and per Idempotency-Key (oncehttp)"},
	{"provider-once", "at most one effect at the provider per repeat-safe operation, however many attempts it took"},
	{"request-once", "at most one effect per request scope and key"},
	{"open-window", "at most one effect per open window: no two effects of an open key overlap, unless the guard told the earlier caller its claim was closed as stale"},
	{"episode-once", "at most one effect per episode: each effect of a key has its own firing, and a key has at most one effect more than the rearms sent"},
	{"statement-cap", "at most cap effects, and at most cap units held, per statement key"},
	{"lease-fence", "lease fences strictly increasing in the order holders ran, and no two holders' runs overlap unless the guard told the earlier one it lost the lease"},
	{"transaction-once", "at most one decision row per transaction key"},
	{"settled-kept", "no settled outcome lost: a forever caller told ran finds its key done with its value; statement units of callers told ran are still held"},
	{"answer-consistent", "every answer matches the final state: a forever duplicate got the recorded value; a refusal's count fills the cap; a ran lease has a fence"},
	{"open-bound", "no forever or open key left in flight once its stale window has passed"},
	{"resolved-kept", "an operation an operator resolved done or failed never runs again and answers as resolved: no effect of its key starts after the resolution, callers after it get the resolved value, and the key holds the resolution"},
	{"resolve-refused", "resolving an operation that is not uncertain (settled, or resolved a moment ago) is refused and changes nothing: no audit row"},
	{"refund-bounded", "a refund gives back at most what was used: one of more than the key holds is refused, no key holds more than its cap before or after a refund or reset, and a key's effects never exceed its cap plus the units given back"},
	{"release-fence", "after a forced release of a lease, every later holder's fence is higher than every fence before it, and while the released holder still runs at most one new holder enters"},
	{"followup-once", "at most one delivery at the provider per operation and follow-up action, however many drains took it and however often"},
	{"followup-delivered", "every follow-up of a settled operation is delivered exactly once after recovery unless it is dead: a caller told ran finds its operation's follow-ups enqueued, a follow-up marked delivered had exactly one delivery at the provider, and only one made to fail is dead"},
	{"followup-revived", "a dead follow-up an operator revived is delivered exactly once, and reviving it again is refused"},
	{"followup-bound", "no follow-up left pending once the bound after recovery has passed (the drains' hold and backoffs) and a drain ran"},
	{"audit-committed", "an operator action's audit row exists iff its change committed: an applied action has exactly one row, a refused one none, and each row's after shows the change"},
}

// Check states every invariant over the history and the final state and returns the
// violations, each shrunk to the calls of its key and the faults that overlapped them.
func Check(h *History, f Final) []Violation {
	calls, effects, faults, rearms := h.Snapshot()
	// A violation's sub-history is its key's calls and effects, indexed once: a run of
	// millions of calls may report thousands of keys.
	callsOf := map[string][]Call{}
	for _, c := range calls {
		callsOf[c.Kind+"\x00"+c.Key] = append(callsOf[c.Kind+"\x00"+c.Key], c)
	}
	effectsOf := map[string][]Effect{}
	for _, e := range effects {
		effectsOf[e.Kind+"\x00"+e.Key] = append(effectsOf[e.Kind+"\x00"+e.Key], e)
	}
	byKey := func(kind, key string) ([]Call, []Effect) {
		return callsOf[kind+"\x00"+key], effectsOf[kind+"\x00"+key]
	}
	var out []Violation
	report := func(inv, kind, key, detail string, only []int) {
		cs, es := byKey(kind, key)
		if only != nil {
			keep := map[int]bool{}
			for _, id := range only {
				keep[id] = true
			}
			var c2 []Call
			for _, c := range cs {
				if keep[c.ID] {
					c2 = append(c2, c)
				}
			}
			var e2 []Effect
			for _, e := range es {
				if keep[e.Call] {
					e2 = append(e2, e)
				}
			}
			cs, es = c2, e2
		}
		out = append(out, Violation{Invariant: inv, Key: kind + " " + key, Detail: detail,
			Calls: cs, Effects: es, Faults: overlapping(faults, cs)})
	}

	callOf := map[int]Call{}
	for _, c := range calls {
		callOf[c.ID] = c
	}
	givenBack := unitsGivenBack(calls)
	forced := forcedReleases(calls)
	keys := make([]string, 0, len(effectsOf))
	for k := range effectsOf {
		keys = append(keys, k)
	}
	sort.Strings(keys)

	for _, k := range keys {
		es := effectsOf[k]
		kind, key, _ := strings.Cut(k, "\x00")
		sort.Slice(es, func(i, j int) bool { return es[i].Start.Before(es[j].Start) })
		switch kind {
		case "forever", "http", "followup":
			if len(es) > 1 {
				report("forever-once", kind, key, fmt.Sprintf("%d effects", len(es)), ids(es))
			}
			if len(es) == 1 && kind == "http" {
				for _, c := range callsOf[k] {
					if c.Status == "duplicate" && c.Err == "" && c.Value != es[0].Value {
						report("answer-consistent", kind, key, fmt.Sprintf("duplicate call %d got %q, the effect was %q", c.ID, c.Value, es[0].Value), []int{c.ID, es[0].Call})
					}
				}
			}
		case "request":
			if len(es) > 1 {
				report("request-once", kind, key, fmt.Sprintf("%d effects in one request scope", len(es)), ids(es))
			}
		case "open":
			for i := 1; i < len(es); i++ {
				prev, cur := es[i-1], es[i]
				if (prev.End.IsZero() || cur.Start.Before(prev.End)) && !callOf[prev.Call].NotOwner {
					report("open-window", kind, key, fmt.Sprintf("the effects of calls %d and %d overlap", prev.Call, cur.Call), []int{prev.Call, cur.Call})
				}
			}
		case "episode":
			seen := map[int64]int{}
			for _, e := range es {
				if e.Firing <= 0 {
					continue // its call was not answered: the firing is unknown
				}
				if c, ok := seen[e.Firing]; ok {
					report("episode-once", kind, key, fmt.Sprintf("calls %d and %d ran in firing %d", c, e.Call, e.Firing), []int{c, e.Call})
				}
				seen[e.Firing] = e.Call
			}
			if n := len(rearms[key]); len(es) > n+1 {
				report("episode-once", kind, key, fmt.Sprintf("%d effects with %d rearms sent", len(es), n), ids(es))
			}
		case "statement":
			limit := callOf[es[0].Call].Cap
			if back := givenBack[key]; int64(len(es)) > limit+back {
				inv := "statement-cap"
				if back > 0 {
					inv = "refund-bounded"
				}
				report(inv, kind, key, fmt.Sprintf("%d effects over a cap of %d and %d units given back", len(es), limit, back), ids(es))
			}
		case "lease":
			for i := 1; i < len(es); i++ {
				prev, cur := es[i-1], es[i]
				if cur.Fence <= prev.Fence {
					report("lease-fence", kind, key, fmt.Sprintf("call %d ran with fence %d after call %d with fence %d", cur.Call, cur.Fence, prev.Call, prev.Fence), []int{prev.Call, cur.Call})
				}
				if (prev.End.IsZero() || cur.Start.Before(prev.End)) && !callOf[prev.Call].NotOwner && !forcedFree(forced[key], prev, cur) {
					report("lease-fence", kind, key, fmt.Sprintf("the runs of calls %d and %d overlap", prev.Call, cur.Call), []int{prev.Call, cur.Call})
				}
			}
		}
	}
	for key, n := range f.ProviderEffects {
		if n > 1 {
			report("provider-once", "provider", key, fmt.Sprintf("%d effects at the provider", n), nil)
		}
	}
	for key, n := range f.Decisions {
		if n > 1 {
			report("transaction-once", "transaction", key, fmt.Sprintf("%d decision rows", n), nil)
		}
	}

	ranUnits := map[string]int64{}
	for _, c := range calls {
		switch c.Kind {
		case "forever":
			op, found := f.Operations[c.Key]
			if c.Status == "ran" && c.Err == "" {
				if !found || op.State != "done" {
					report("settled-kept", c.Kind, c.Key, fmt.Sprintf("call %d was told ran, the key is %q", c.ID, op.State), []int{c.ID})
				} else if op.Result != jsonString(c.Value) {
					report("settled-kept", c.Kind, c.Key, fmt.Sprintf("call %d was told ran with %q, the key holds %s", c.ID, c.Value, op.Result), []int{c.ID})
				}
			}
			if c.Status == "duplicate" && c.Err == "" && found && op.State == "done" && op.Result != jsonString(c.Value) {
				report("answer-consistent", c.Kind, c.Key, fmt.Sprintf("duplicate call %d got %q, the key holds %s", c.ID, c.Value, op.Result), []int{c.ID})
			}
		case "statement":
			if c.Status == "ran" && c.Err == "" {
				ranUnits[c.Key]++
			}
			if c.Status == "refused" && c.Count+1 <= c.Cap {
				report("answer-consistent", c.Kind, c.Key, fmt.Sprintf("call %d was refused at count %d under a cap of %d", c.ID, c.Count, c.Cap), []int{c.ID})
			}
		case "lease":
			if c.Status == "ran" && c.Fence <= 0 {
				report("answer-consistent", c.Kind, c.Key, fmt.Sprintf("call %d ran with fence %d", c.ID, c.Fence), []int{c.ID})
			}
		}
	}
	for key, n := range ranUnits {
		if f.Slots[key] < n-givenBack[key] {
			report("settled-kept", "statement", key, fmt.Sprintf("%d callers told ran, %d units given back, %d units held", n, givenBack[key], f.Slots[key]), nil)
		}
	}
	for key, n := range f.Slots {
		var limit int64 = -1
		for _, c := range calls {
			if c.Kind == "statement" && c.Key == key {
				limit = c.Cap
				break
			}
		}
		if limit >= 0 && n > limit {
			report("statement-cap", "statement", key, fmt.Sprintf("%d units held over a cap of %d", n, limit), nil)
		}
	}
	out = append(out, checkOperator(calls, effects, faults, f)...)
	out = append(out, checkFollowUps(calls, effects, faults, f)...)
	probes := make([]string, 0, len(f.Probes))
	for k := range f.Probes {
		probes = append(probes, k)
	}
	sort.Strings(probes)
	for _, k := range probes {
		if p := f.Probes[k]; p == "in_flight" || strings.HasPrefix(p, "blocked: ") {
			kind, key, _ := strings.Cut(k, " ")
			report("open-bound", kind, key, "a call after its stale window: "+p, nil)
		}
	}
	return out
}

func ids(es []Effect) []int {
	out := make([]int, len(es))
	for i, e := range es {
		out[i] = e.Call
	}
	return out
}

func jsonString(s string) string { return fmt.Sprintf("%q", s) }

// overlapping returns the faults active at some moment of the calls.
func overlapping(faults []Fault, cs []Call) []Fault {
	var out []Fault
	for _, f := range faults {
		for _, c := range cs {
			end := c.End
			if end.IsZero() {
				end = time.Now()
			}
			fEnd := f.End
			if fEnd.IsZero() {
				fEnd = time.Now()
			}
			if f.Start.Before(end) && c.Start.Before(fEnd) {
				out = append(out, f)
				break
			}
		}
	}
	return out
}
