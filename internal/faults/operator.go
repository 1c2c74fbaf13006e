package faults

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math/rand"
	"time"

	once "github.com/oncekit/once/runtime"
	"github.com/oncekit/once/runtime/onceops"
)

// operatorActions is the table of what the operator loop does, each action with the kind
// whose keys it acts on (it is drawn only when that kind runs) and how it is taken. The
// actions a person decides go through onceops.Audit, with the call's id in the reason, so
// the checker can tie each audit row to the call that made it.
var operatorActions = []struct {
	Name   string
	Kind   string
	Weight int
	Do     func(ctx context.Context, w *workload, r *rand.Rand, id int, c *Call) error
}{
	{"resolve", "forever", 4, resolve},
	{"force-release", "lease", 3, func(ctx context.Context, w *workload, r *rand.Rand, id int, c *Call) error {
		return w.audit(id).ForceRelease(ctx, w.pool, "faults", c.Key)
	}},
	{"rearm", "episode", 2, func(ctx context.Context, w *workload, r *rand.Rand, id int, c *Call) error {
		w.h.Rearm(c.Key)
		_, err := w.audit(id).Rearm(ctx, w.pool, "faults", c.Key)
		return err
	}},
	{"refund", "statement", 3, func(ctx context.Context, w *workload, r *rand.Rand, id int, c *Call) error {
		// Now and then more than the cap: more than the key can hold, refused whole.
		c.N = 1
		if r.Intn(4) == 0 {
			c.N = statementCap + 1
		}
		return w.audit(id).Refund(ctx, w.pool, "faults", c.Key, c.N)
	}},
	{"reset", "statement", 1, func(ctx context.Context, w *workload, r *rand.Rand, id int, c *Call) error {
		n, err := w.audit(id).ResetAllowance(ctx, w.pool, "faults", c.Key)
		c.Count = n
		return err
	}},
	{"sweep", "open", 1, func(ctx context.Context, w *workload, r *rand.Rand, id int, c *Call) error {
		n, err := onceops.SweepStale(ctx, w.pool, "faults")
		c.Count = n
		return err
	}},
	{"revive", "followup", 3, revive},
	{"reap", "forever", 1, func(ctx context.Context, w *workload, r *rand.Rand, id int, c *Call) error {
		n, err := onceops.ReapExpired(ctx, w.pool, 0)
		c.Count = n
		return err
	}},
}

// operatorActor is the actor of the operator loop's audited actions.
const operatorActor = "faults-operator"

func (w *workload) audit(id int) onceops.Audit {
	return onceops.Audit{Actor: operatorActor, Reason: auditReason(id)}
}

func auditReason(id int) string { return fmt.Sprintf("faults call %d", id) }

// operate is the operator loop: until ctx ends, it takes an action drawn from r on a key of
// a kind that runs, through the fault proxy, with a deadline, and records it in the
// history as a call of kind "operator".
func (w *workload) operate(ctx context.Context, r *rand.Rand) {
	var table []int
	for i, a := range operatorActions {
		for _, k := range w.kinds {
			if k == a.Kind {
				for j := 0; j < a.Weight; j++ {
					table = append(table, i)
				}
				break
			}
		}
	}
	if len(table) == 0 {
		return
	}
	for ctx.Err() == nil {
		sleep(ctx, time.Duration(r.Intn(150)+20)*time.Millisecond)
		a := operatorActions[table[r.Intn(len(table))]]
		key := fmt.Sprintf("%s-%d", a.Kind, r.Intn(w.keys))
		d := 20*time.Millisecond + time.Duration(r.Int63n(int64(w.deadline)))
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), d)
		id := w.h.Begin("operator", key)
		c := Call{Action: a.Name, Key: key}
		err := a.Do(cctx, w, r, id, &c)
		cancel()
		if !errors.Is(err, errRecorded) {
			w.end(id, c, err)
		}
	}
}

// end records an operator call's answer: applied, refused (the function said why it
// changed nothing), or the error of a call whose fate is not known.
func (w *workload) end(id int, c Call, err error) {
	w.h.End(id, func(c2 *Call) {
		c2.Key, c2.Action, c2.Target, c2.N, c2.Count, c2.Value, c2.Repeat = c.Key, c.Action, c.Target, c.N, c.Count, c.Value, c.Repeat
		switch {
		case c.Status != "":
			c2.Status = c.Status
		case err == nil:
			c2.Status = "applied"
		case refusal(err):
			c2.Status, c2.Err = "refused", err.Error()
		default:
			c2.Err = err.Error()
		}
	})
}

// refusal says whether err is an operator function's answer that it changed nothing, as
// opposed to an error that leaves unknown whether its change committed.
func refusal(err error) bool {
	return errors.Is(err, onceops.ErrNotUncertain) || errors.Is(err, onceops.ErrNoOperation) || errors.Is(err, once.ErrInvalid) ||
		errors.Is(err, onceops.ErrNotDead) || errors.Is(err, onceops.ErrNoFollowUp)
}

// resolve reconciles one uncertain operation as an operator would, with the history as the
// provider's record: an operation whose key had an effect is resolved done (with a value
// of its own, which every later caller must get) or failed; one whose key had none, and no
// call of which is running, is released to run again, or failed. An operation that is not
// uncertain (a done or failed key), and one just resolved done or failed, are resolved again
// as well: the function must refuse and change nothing.
func resolve(ctx context.Context, w *workload, r *rand.Rand, id int, c *Call) error {
	list, err := onceops.ListUncertain(ctx, w.pool, "faults", 0)
	if err != nil {
		c.Action = "list uncertain"
		return err
	}
	if len(list) == 0 {
		op, err := onceops.Lookup(ctx, w.pool, "faults", "", c.Key)
		if errors.Is(err, onceops.ErrNoOperation) || (err == nil && op.State != "done" && op.State != "failed") {
			// Nothing uncertain, and nothing settled to resolve again: no call was made.
			c.Status = "idle"
			return nil
		}
		if err != nil {
			c.Action = "lookup"
			return err
		}
		c.Action, c.Target, c.Repeat = "resolve retry", op.ID, true
		return w.audit(id).ResolveRetry(ctx, w.pool, op.ID)
	}
	op := list[r.Intn(len(list))]
	c.Key, c.Target = op.Key, op.ID
	effects, running := w.h.keyState("forever", op.Key)
	a := w.audit(id)
	switch {
	case effects > 0 && r.Intn(3) > 0:
		c.Action, c.Value = "resolve done", fmt.Sprintf("r-%d", id)
		err = a.ResolveDone(ctx, w.pool, op.ID, c.Value)
	case effects == 0 && running == 0 && r.Intn(3) > 0:
		c.Action = "resolve retry"
		return a.ResolveRetry(ctx, w.pool, op.ID)
	default:
		c.Action = "resolve failed"
		err = a.ResolveFailed(ctx, w.pool, op.ID, "the provider has no record of it")
	}
	if err != nil {
		return err
	}
	// The same resolution again, as a second operator would: the operation is settled now.
	w.end(id, *c, nil)
	id2 := w.h.Begin("operator", op.Key)
	c2 := Call{Action: c.Action, Key: op.Key, Target: op.ID, Value: c.Value, Repeat: true}
	a2 := w.audit(id2)
	if c.Action == "resolve done" {
		err = a2.ResolveDone(ctx, w.pool, op.ID, c.Value)
	} else {
		err = a2.ResolveFailed(ctx, w.pool, op.ID, "the provider has no record of it")
	}
	w.end(id2, c2, err)
	// This call's own answer is recorded already.
	return errRecorded
}

// errRecorded: the action recorded its calls' answers itself.
var errRecorded = errors.New("faults: recorded")

// AuditRow is a row of once.audit the operator loop wrote, tied to its call by the reason.
type AuditRow struct {
	Call           int
	Action, Target string
	Before, After  map[string]any
}

// readAudit reads the operator loop's audit rows.
func (w *workload) readAudit(ctx context.Context) ([]AuditRow, error) {
	rows, err := w.direct.Query(ctx, `SELECT reason, action, target, coalesce(before::text, 'null'), coalesce(after::text, 'null')
FROM once.audit WHERE actor = $1 ORDER BY id`, operatorActor)
	if err != nil {
		return nil, fmt.Errorf("faults: reading once.audit: %w", err)
	}
	defer rows.Close()
	var out []AuditRow
	for rows.Next() {
		var reason, before, after string
		var a AuditRow
		if err := rows.Scan(&reason, &a.Action, &a.Target, &before, &after); err != nil {
			return nil, err
		}
		if _, err := fmt.Sscanf(reason, "faults call %d", &a.Call); err != nil {
			return nil, fmt.Errorf("faults: audit row of %s with reason %q: not the operator loop's", a.Target, reason)
		}
		if err := json.Unmarshal([]byte(before), &a.Before); err != nil {
			return nil, fmt.Errorf("faults: audit row of call %d: before: %w", a.Call, err)
		}
		if err := json.Unmarshal([]byte(after), &a.After); err != nil {
			return nil, fmt.Errorf("faults: audit row of call %d: after: %w", a.Call, err)
		}
		out = append(out, a)
	}
	return out, rows.Err()
}
