package faults

import (
	"context"
	"errors"
	"fmt"
	"math/rand"
	"net/http"
	"strconv"
	"strings"
	"time"

	once "github.com/oncekit/once/runtime"
	"github.com/oncekit/once/runtime/onceops"
)

// The follow-up workload: forever operations that enqueue follow-ups as they settle, drains
// delivering them to the provider under their provider keys while the faults run, some made
// to fail until they are dead, and the operator loop mending and reviving those.
const (
	// followUpName is the follow-up workload's guard name.
	followUpName = "faults-followup"
	// followUpNotify is delivered at the provider at its first try.
	followUpNotify = "notify"
	// followUpDoomed fails every delivery until an operator mends it, so it ends dead unless
	// it is revived after the mend.
	followUpDoomed = "doomed"
	// followUpAttempts, followUpBackoff and followUpHold are the drains' MaxAttempts, Backoff
	// and Hold.
	followUpAttempts = 3
	followUpBackoff  = 20 * time.Millisecond
	followUpHold     = 2 * time.Second
	// followUpDrains is how many drains run at once.
	followUpDrains = 3
)

// followUpBound is how long after recovery a follow-up may still be pending: a drain that
// took it and was cut off holds it for followUpHold, and its failed deliveries wait their
// backoffs (doubling from followUpBackoff) before it is dead.
func followUpBound() time.Duration {
	b := followUpHold
	for i, w := 0, followUpBackoff; i < followUpAttempts; i, w = i+1, w*2 {
		b += w
	}
	return b
}

// followUpBody is what a delivery sends the provider.
type followUpBody struct {
	Key    string `json:"key"`
	Action string `json:"action"`
}

// followUpPath is the provider path an action is delivered to.
func followUpPath(action string) string { return "/v1/followups/" + action }

// enqueue is the follow-up operation's function: it enqueues a notify follow-up, and with
// doomed a doomed one too, and says which it enqueued.
func enqueue(ctx context.Context, key string, doomed bool) (string, error) {
	a, ok := once.AttemptFrom(ctx)
	if !ok {
		return "", errors.New("faults: no attempt in a forever guard's context")
	}
	actions := []string{followUpNotify}
	if doomed {
		actions = append(actions, followUpDoomed)
	}
	for _, action := range actions {
		if err := a.FollowUp(action, followUpBody{Key: key, Action: action}); err != nil {
			return "", err
		}
	}
	return strings.Join(actions, ","), nil
}

// drain is the drain the workload runs, its deliveries recorded as effects of call.
func (w *workload) drain(call int) onceops.Drain {
	deliver := func(ctx context.Context, f onceops.FollowUp) error {
		if _, mended := w.mended.Load(f.ID); f.Action == followUpDoomed && !mended {
			return errors.New("the recipient's address is wrong until an operator mends it")
		}
		key, _ := once.ProviderKeyFrom(ctx)
		done := w.h.Effect(Effect{Call: call, Kind: "followup-delivery", Key: f.Key + " " + f.Action, Value: key})
		rep, err := w.provider.Post(ctx, followUpPath(f.Action), key, followUpBody{Key: f.Key, Action: f.Action})
		done()
		if err == nil && rep.Status != http.StatusOK {
			err = fmt.Errorf("provider answered %d", rep.Status)
		}
		return err
	}
	return onceops.Drain{
		Deliver:     map[string]func(context.Context, onceops.FollowUp) error{followUpNotify: deliver, followUpDoomed: deliver},
		Batch:       5,
		Backoff:     followUpBackoff,
		MaxAttempts: followUpAttempts,
		Hold:        followUpHold,
	}
}

// drainLoop runs drains through the fault proxy until ctx ends, each with a deadline drawn
// from r, and records each as a call of kind "drain".
func (w *workload) drainLoop(ctx context.Context, r *rand.Rand) {
	for ctx.Err() == nil {
		sleep(ctx, time.Duration(r.Intn(80)+20)*time.Millisecond)
		d := 20*time.Millisecond + time.Duration(r.Int63n(int64(w.deadline)))
		cctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), d)
		id := w.h.Begin("drain", "")
		res, err := w.drain(id).Run(cctx, w.pool)
		cancel()
		w.h.End(id, func(c *Call) {
			c.Status, c.Count, c.N = "drained", int64(res.Delivered), int64(res.Dead)
			if err != nil {
				c.Err = err.Error()
			}
		})
	}
}

// revive is the operator's answer to a dead follow-up: mend what made it fail, then revive
// it; and, once it is revived, revive it again as a second operator would, which must be
// refused.
func revive(ctx context.Context, w *workload, r *rand.Rand, id int, c *Call) error {
	list, err := onceops.ListDeadFollowUps(ctx, w.pool, followUpDoomed, 0)
	if err != nil {
		c.Action = "list dead"
		return err
	}
	if len(list) == 0 {
		c.Status = "idle"
		return nil
	}
	f := list[r.Intn(len(list))]
	c.Key, c.Target = f.Key, strconv.FormatInt(f.ID, 10)
	w.mended.Store(f.ID, true)
	if err := w.audit(id).ReviveFollowUp(ctx, w.pool, f.ID); err != nil {
		return err
	}
	w.end(id, *c, nil)
	id2 := w.h.Begin("operator", f.Key)
	err = w.audit(id2).ReviveFollowUp(ctx, w.pool, f.ID)
	w.end(id2, Call{Action: "revive again", Key: f.Key, Target: c.Target}, err)
	return errRecorded
}

// FollowUpRow is one row of once.followups the follow-up workload enqueued.
type FollowUpRow struct {
	ID        int64
	State     string
	Attempts  int64
	LastError string
}

// finalDrain drains straight, after recovery, until no follow-up is pending or the bound
// has passed: what is pending then was left past its bound.
func (w *workload) finalDrain(ctx context.Context) error {
	deadline := time.Now().Add(followUpBound())
	for {
		id := w.h.Begin("drain", "final")
		res, err := w.drain(id).Run(ctx, w.direct)
		w.h.End(id, func(c *Call) {
			c.Status, c.Count, c.N = "drained", int64(res.Delivered), int64(res.Dead)
			if err != nil {
				c.Err = err.Error()
			}
		})
		if err != nil {
			return fmt.Errorf("faults: the final drain: %w", err)
		}
		var pending int
		if err := w.direct.QueryRow(ctx, `SELECT count(*) FROM once.followups WHERE operation = $1 AND state = 'pending'`, followUpName).Scan(&pending); err != nil {
			return fmt.Errorf("faults: counting pending follow-ups: %w", err)
		}
		if pending == 0 || time.Now().After(deadline) {
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// readFollowUps reads the follow-up workload's rows, by "key action".
func (w *workload) readFollowUps(ctx context.Context) (map[string]FollowUpRow, error) {
	rows, err := w.direct.Query(ctx, `SELECT key, action, id, state, attempts, coalesce(last_error, '') FROM once.followups WHERE operation = $1`, followUpName)
	if err != nil {
		return nil, fmt.Errorf("faults: reading once.followups: %w", err)
	}
	defer rows.Close()
	out := map[string]FollowUpRow{}
	for rows.Next() {
		var key, action string
		var f FollowUpRow
		if err := rows.Scan(&key, &action, &f.ID, &f.State, &f.Attempts, &f.LastError); err != nil {
			return nil, err
		}
		out[key+" "+action] = f
	}
	return out, rows.Err()
}
