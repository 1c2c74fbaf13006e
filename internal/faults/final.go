package faults

import (
	"context"
	"encoding/json"
	"fmt"

	once "github.com/oncekit/once/runtime"
)

// final reads the state the checker compares the history with, straight from the server,
// and probes every forever and open key once: a key still in flight now, after its stale
// window, was left open past its bound.
func (w *workload) final(ctx context.Context) (Final, map[string]int, error) {
	f := Final{Operations: map[string]Operation{}, Slots: map[string]int64{}, Decisions: map[string]int64{}, Probes: map[string]string{}, ProviderEffects: map[string]int{}, FollowUpEffects: map[string]int{}}
	if w.followups {
		// After recovery, drains deliver what is due until nothing is pending or the bound
		// passed; the provider's log is read after.
		if err := w.finalDrain(ctx); err != nil {
			return f, nil, err
		}
		var err error
		if f.FollowUps, err = w.readFollowUps(ctx); err != nil {
			return f, nil, err
		}
	}
	for _, e := range w.provider.Log() {
		var body followUpBody
		if err := json.Unmarshal(e.Body, &body); err != nil {
			return f, nil, fmt.Errorf("faults: reading the provider's effect %s: %w", e.ID, err)
		}
		if e.Path == followUpPath(body.Action) {
			f.FollowUpEffects[body.Key+" "+body.Action]++
			continue
		}
		f.ProviderEffects[body.Key]++
	}
	rows, err := w.direct.Query(ctx, `SELECT key, state::text, coalesce(result::text, '') FROM once.operations WHERE name = 'faults'`)
	if err != nil {
		return f, nil, fmt.Errorf("faults: reading once.operations: %w", err)
	}
	for rows.Next() {
		var k string
		var op Operation
		if err := rows.Scan(&k, &op.State, &op.Result); err != nil {
			return f, nil, err
		}
		f.Operations[k] = op
	}
	if err := rows.Err(); err != nil {
		return f, nil, err
	}
	if err := scanCounts(ctx, w, `SELECT key, count(*) FROM once.counter_slots WHERE name = 'faults' GROUP BY key`, f.Slots); err != nil {
		return f, nil, err
	}
	if err := scanCounts(ctx, w, `SELECT key, count(*) FROM faults_decisions GROUP BY key`, f.Decisions); err != nil {
		return f, nil, err
	}
	// Every forever key the run used (a new set of keys every foreverRound), and every open key.
	calls, _, _, _ := w.h.Snapshot()
	seen := map[string]bool{}
	var foreverKeys []string
	for _, c := range calls {
		if c.Kind == "forever" && !seen[c.Key] {
			seen[c.Key] = true
			foreverKeys = append(foreverKeys, c.Key)
		}
	}
	for _, key := range foreverKeys {
		id := w.h.Begin("forever", key)
		v, out, err := once.ForeverValue(ctx, w.direct, once.Forever{Name: "faults", Stale: w.stale}, once.Ref{Key: key}, func(ctx context.Context) (string, error) {
			v := fmt.Sprintf("v-%d", id)
			w.h.Effect(Effect{Call: id, Kind: "forever", Key: key, Value: v})()
			return v, nil
		})
		w.h.End(id, func(c *Call) {
			c.Status, c.Value = statusText(out.Status), v
			if err != nil {
				c.Err = err.Error()
			}
		})
		f.Probes["forever "+key] = probeText(out, err)
		if out.Ran() {
			// The probe settled the key; read it again so the checker sees its value.
			var op Operation
			if err := w.direct.QueryRow(ctx, `SELECT state::text, coalesce(result::text, '') FROM once.operations WHERE name = 'faults' AND key = $1`, key).Scan(&op.State, &op.Result); err == nil {
				f.Operations[key] = op
			}
		}
	}
	for i := 0; i < w.keys; i++ {
		key := fmt.Sprintf("open-%d", i)
		c, out, err := once.Open{Name: "faults", Stale: w.stale}.Claim(ctx, w.direct, key)
		f.Probes["open "+key] = probeText(out, err)
		if c != nil {
			c.Finish(ctx, w.direct)
		}
	}
	// Units held that no caller was told of: a reservation whose answer was cut off and
	// whose clean-up could not reach the database. Documented to stay until refunded.
	calls, _, _, _ = w.h.Snapshot()
	told := map[string]int64{}
	for _, c := range calls {
		if c.Kind == "statement" && c.Status == "ran" && c.Err == "" {
			told[c.Key]++
		}
	}
	left := map[string]int{}
	for k, n := range f.Slots {
		if n > told[k] {
			left["statement units"] += int(n - told[k])
		}
	}
	for _, op := range f.Operations {
		if op.State == "open" || op.State == "uncertain" {
			left["forever "+op.State]++
		}
	}
	if f.Audit, err = w.readAudit(ctx); err != nil {
		return f, nil, err
	}
	return f, left, nil
}

func scanCounts(ctx context.Context, w *workload, sql string, into map[string]int64) error {
	rows, err := w.direct.Query(ctx, sql)
	if err != nil {
		return fmt.Errorf("faults: reading counts: %w", err)
	}
	defer rows.Close()
	for rows.Next() {
		var k string
		var n int64
		if err := rows.Scan(&k, &n); err != nil {
			return err
		}
		into[k] = n
	}
	return rows.Err()
}

// probeText is a probe's answer: its status, or "blocked: " and the error of a call that
// failed before it reached the promise.
func probeText(out once.Outcome, err error) string {
	if out.Status == 0 && err != nil {
		return "blocked: " + err.Error()
	}
	return statusText(out.Status)
}

func statusText(s once.Status) string {
	if s == 0 {
		return ""
	}
	switch s {
	case once.InFlight:
		return "in_flight"
	}
	return s.String()
}
