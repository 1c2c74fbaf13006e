package once_test

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	once "github.com/oncekit/once/runtime"
	"github.com/oncekit/once/runtime/internal/memstore"
	"github.com/oncekit/once/runtime/oncetest"
)

// The in-memory stand-in (oncetest.Memory) is held to what PostgreSQL does: every scenario
// below is a sequence of guard calls and the observations a caller makes of them (status,
// the ids named, the value or error replayed), run against a real database and against the
// stand-in, each of which must give the scenario's observations exactly. The negative
// controls run the same table against stand-ins that are wrong on purpose and require it to
// fail.

// transcript is what a scenario observes. Row ids (operation UUIDs, claim numbers) are
// written as the order they were first seen in, #1, #2: the database and the stand-in draw
// them differently, and what a caller can rely on is which call a duplicate names.
type transcript struct {
	mu    sync.Mutex
	lines []string
	ids   map[string]string
}

func (r *transcript) say(format string, args ...any) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.lines = append(r.lines, fmt.Sprintf(format, args...))
}

// id names a row id by when it was first seen.
func (r *transcript) id(s string) string {
	if s == "" {
		return "-"
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	if r.ids == nil {
		r.ids = map[string]string{}
	}
	if n, ok := r.ids[s]; ok {
		return n
	}
	n := fmt.Sprintf("#%d", len(r.ids)+1)
	r.ids[s] = n
	return n
}

// out records one guarded call: its Outcome's fields that are set, and its error's kind.
func (r *transcript) out(step string, out once.Outcome, err error) {
	var b strings.Builder
	fmt.Fprintf(&b, "%s: %v", step, out.Status)
	if out.Claim != "" {
		fmt.Fprintf(&b, " claim=%s", r.id(out.Claim))
	}
	if out.Holder != "" {
		fmt.Fprintf(&b, " holder=%s", r.id(out.Holder))
	}
	for _, f := range []struct {
		name string
		v    int64
	}{{"firing", out.Firing}, {"count", out.Count}, {"fence", out.Fence}} {
		if f.v != 0 {
			fmt.Fprintf(&b, " %s=%d", f.name, f.v)
		}
	}
	fmt.Fprintf(&b, " err=%s", errKind(err))
	r.say("%s", b.String())
}

// errKind names what a caller tests an error for.
func errKind(err error) string {
	var f *once.Failure
	switch {
	case err == nil:
		return "nil"
	case errors.As(err, &f):
		return "failure(" + f.Message + ")"
	case errors.Is(err, once.ErrUncertain):
		return "uncertain"
	case errors.Is(err, once.ErrMismatch):
		return "mismatch"
	case errors.Is(err, once.ErrNotOwner):
		return "not-owner"
	case errors.Is(err, once.ErrInvalid):
		return "invalid"
	case errors.Is(err, once.ErrResultTooLarge):
		return "result-too-large"
	case errors.Is(err, oncetest.ErrNoSQL):
		return "no-sql"
	}
	return err.Error()
}

// within waits for ch, or says the scenario stalled: a wrong stand-in must fail the table,
// not hang it.
func within[T any](r *transcript, what string, ch <-chan T) (T, bool) {
	select {
	case v := <-ch:
		return v, true
	case <-time.After(10 * time.Second):
		r.say("stalled waiting for %s", what)
		var zero T
		return zero, false
	}
}

// fireAtOnce fires n calls at once and records how many answered each way.
func fireAtOnce(r *transcript, n int, call func() (once.Outcome, error)) {
	var wg sync.WaitGroup
	var mu sync.Mutex
	counts := map[string]int{}
	start := make(chan struct{})
	for range n {
		wg.Go(func() {
			<-start
			out, err := call()
			mu.Lock()
			counts[fmt.Sprintf("%v err=%s", out.Status, errKind(err))]++
			mu.Unlock()
		})
	}
	close(start)
	wg.Wait()
	keys := make([]string, 0, len(counts))
	for k := range counts {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	for _, k := range keys {
		r.say("storm of %d: %d %s", n, counts[k], k)
	}
}

// fireHolding is fireAtOnce for a promise that lasts while its function runs (open, lease):
// the function, wherever it runs, holds until every other call has answered, so that no
// call comes after it returned.
func fireHolding(r *transcript, n int, call func(fn func(context.Context) error) (once.Outcome, error)) {
	release := make(chan struct{})
	var answered atomic.Int32
	var closing sync.Once
	fireAtOnce(r, n, func() (once.Outcome, error) {
		ran := false
		out, err := call(func(context.Context) error {
			ran = true
			within(r, "the other callers", release)
			return nil
		})
		if !ran && answered.Add(1) == int32(n-1) {
			closing.Do(func() { close(release) })
		}
		return out, err
	})
}

// A scenario's guard names are its own, so that all run on one database at once.
type memoryScenario struct {
	name string
	run  func(ctx context.Context, db once.DB, r *transcript)
	want []string
}

func ok(context.Context) error { return nil }

// answer is a guarded call's answer, passed from the goroutine that made it.
type answer struct {
	out once.Outcome
	err error
}

var memoryScenarios = []memoryScenario{
	{
		name: "forever replays the recorded value",
		run: func(ctx context.Context, db once.DB, r *transcript) {
			g := once.Forever{Name: "mem.Replay"}
			ref := once.Ref{Key: "order/1"}
			for i := range 2 {
				v, out, err := once.ForeverValue(ctx, db, g, ref, func(context.Context) (string, error) { return fmt.Sprint("receipt-", i), nil })
				r.out("value call", out, err)
				r.say("value %q", v)
			}
			out, err := g.Do(ctx, db, ref, ok)
			r.out("call without value", out, err)
		},
		want: []string{
			"value call: ran claim=#1 err=nil", `value "receipt-0"`,
			"value call: duplicate holder=#1 err=nil", `value "receipt-0"`,
			"call without value: duplicate holder=#1 err=nil",
		},
	},
	{
		name: "forever records terminal uncertain and retryable failures",
		run: func(ctx context.Context, db once.DB, r *transcript) {
			g := once.Forever{Name: "mem.Record"}
			for _, c := range []struct {
				key string
				err error
			}{
				{"declined", once.Terminal(errors.New("card declined"))},
				{"lost", once.Uncertain(errors.New("answer lost"))},
				{"timeout", errors.New("provider timeout")},
			} {
				out, err := g.Do(ctx, db, once.Ref{Key: c.key}, func(context.Context) error { return c.err })
				r.out(c.key+" first", out, err)
				out, err = g.Do(ctx, db, once.Ref{Key: c.key}, func(ctx context.Context) error {
					a, _ := once.AttemptFrom(ctx)
					r.say("%s ran again as attempt %d", c.key, a.Number())
					return nil
				})
				r.out(c.key+" second", out, err)
			}
		},
		want: []string{
			"declined first: ran claim=#1 err=card declined",
			"declined second: duplicate holder=#1 err=failure(card declined)",
			"lost first: ran claim=#2 err=uncertain",
			"lost second: duplicate holder=#2 err=uncertain",
			"timeout first: ran claim=#3 err=provider timeout",
			"timeout ran again as attempt 2",
			"timeout second: ran claim=#3 err=nil",
		},
	},
	{
		name: "forever leaves a rejected key unused and refuses a reused one",
		run: func(ctx context.Context, db once.DB, r *transcript) {
			g := once.Forever{Name: "mem.Input"}
			out, err := g.Do(ctx, db, once.Ref{Key: "k", Input: map[string]int{"amount": 1}},
				func(context.Context) error { return once.Rejected(errors.New("amount too small")) })
			r.out("rejected", out, err)
			out, err = g.Do(ctx, db, once.Ref{Key: "k", Input: map[string]int{"amount": 2}}, ok)
			r.out("corrected", out, err)
			out, err = g.Do(ctx, db, once.Ref{Key: "k", Input: map[string]int{"amount": 3}}, ok)
			r.out("reused with another input", out, err)
			out, err = g.Do(ctx, db, once.Ref{Key: "k", Input: map[string]int{"amount": 2}}, ok)
			r.out("retried with its input", out, err)
			out, err = g.Do(ctx, db, once.Ref{Scope: "acct/2", Key: "k", Input: map[string]int{"amount": 3}}, ok)
			r.out("same key in another scope", out, err)
		},
		want: []string{
			"rejected: ran claim=#1 err=amount too small",
			"corrected: ran claim=#2 err=nil",
			"reused with another input: Status(0) err=mismatch",
			"retried with its input: duplicate holder=#2 err=nil",
			"same key in another scope: ran claim=#3 err=nil",
		},
	},
	{
		name: "forever releases a rejection after a retry and records an oversized result without it",
		run: func(ctx context.Context, db once.DB, r *transcript) {
			g := once.Forever{Name: "mem.Later"}
			a, b := once.Ref{Key: "k", Input: "a"}, once.Ref{Key: "k", Input: "b"}
			out, err := g.Do(ctx, db, a, func(context.Context) error { return errors.New("timeout") })
			r.out("retryable", out, err)
			out, err = g.Do(ctx, db, a, func(context.Context) error { return once.Rejected(errors.New("refused")) })
			r.out("rejected on attempt 2", out, err)
			out, err = g.Do(ctx, db, b, ok)
			r.out("another input", out, err)
			out, err = g.Do(ctx, db, a, func(ctx context.Context) error {
				at, _ := once.AttemptFrom(ctx)
				r.say("its input runs as attempt %d", at.Number())
				return nil
			})
			r.out("its input", out, err)

			big := once.Forever{Name: "mem.Big", MaxResult: 8}
			for _, step := range []string{"oversized", "its duplicate"} {
				_, out, err := once.ForeverValue(ctx, db, big, once.Ref{Key: "k"}, func(context.Context) (string, error) { return "a long report body", nil })
				r.out(step, out, err)
			}
		},
		want: []string{
			"retryable: ran claim=#1 err=timeout",
			"rejected on attempt 2: ran claim=#1 err=refused",
			"another input: Status(0) err=mismatch",
			"its input runs as attempt 3",
			"its input: ran claim=#1 err=nil",
			"oversized: ran claim=#2 err=result-too-large",
			"its duplicate: duplicate holder=#2 err=result-too-large",
		},
	},
	{
		name: "a panicking function leaves each kind as a failure does",
		run: func(ctx context.Context, db once.DB, r *transcript) {
			boom := func(context.Context) error { panic("boom") }
			try := func(what string, call func() (once.Outcome, error)) {
				defer func() { r.say("%s panicked: %v", what, recover()) }()
				call()
			}
			for _, safe := range []bool{false, true} {
				g := once.Forever{Name: fmt.Sprint("mem.Panic.", safe), RepeatSafe: safe}
				try(fmt.Sprint("forever repeat-safe ", safe), func() (once.Outcome, error) { return g.Do(ctx, db, once.Ref{Key: "k"}, boom) })
				out, err := g.Do(ctx, db, once.Ref{Key: "k"}, ok)
				r.out(fmt.Sprint("forever repeat-safe ", safe, " next"), out, err)
			}
			st := once.Statement{Name: "mem.Panic", Cap: 1}
			try("statement", func() (once.Outcome, error) { return st.Do(ctx, db, "k", 1, boom) })
			out, err := st.Do(ctx, db, "k", 1, ok)
			r.out("statement next", out, err)
			ep := once.Episode{Name: "mem.Panic"}
			try("episode", func() (once.Outcome, error) { return ep.Do(ctx, db, "k", boom) })
			out, err = ep.Do(ctx, db, "k", ok)
			r.out("episode next", out, err)
			op := once.Open{Name: "mem.Panic"}
			try("open", func() (once.Outcome, error) { return op.Do(ctx, db, "k", boom) })
			out, err = op.Do(ctx, db, "k", ok)
			r.out("open next", out, err)
			le := once.Lease{Name: "mem.Panic", TTL: time.Minute}
			try("lease", func() (once.Outcome, error) { return le.Do(ctx, db, "k", boom) })
			out, err = le.Do(ctx, db, "k", ok)
			r.out("lease next", out, err)
		},
		want: []string{
			"forever repeat-safe false panicked: boom",
			"forever repeat-safe false next: duplicate holder=#1 err=uncertain",
			"forever repeat-safe true panicked: boom",
			"forever repeat-safe true next: ran claim=#2 err=nil",
			"statement panicked: boom",
			"statement next: ran count=1 err=nil",
			"episode panicked: boom",
			"episode next: ran firing=2 err=nil",
			"open panicked: boom",
			"open next: ran claim=#3 err=nil",
			"lease panicked: boom",
			"lease next: ran fence=2 err=nil",
		},
	},
	{
		name: "forever in flight answers at once or waits for the outcome",
		run: func(ctx context.Context, db once.DB, r *transcript) {
			g := once.Forever{Name: "mem.Flight"}
			ref := once.Ref{Key: "report/9"}
			running, release, done := make(chan struct{}), make(chan struct{}), make(chan answer, 1)
			go func() {
				_, out, err := once.ForeverValue(ctx, db, g, ref, func(context.Context) (int, error) {
					close(running)
					<-release
					return 42, nil
				})
				done <- answer{out, err}
			}()
			if _, ok := within(r, "the holder", running); !ok {
				return
			}
			_, out, err := once.ForeverValue(ctx, db, g, ref, func(context.Context) (int, error) { return 0, nil })
			r.out("no wait", out, err)
			waited := make(chan answer, 1)
			go func() {
				w := g
				w.Wait = 5 * time.Second
				v, out, err := once.ForeverValue(ctx, db, w, ref, func(context.Context) (int, error) { return 0, nil })
				if err == nil && v != 42 {
					err = fmt.Errorf("waited value %d", v)
				}
				waited <- answer{out, err}
			}()
			time.Sleep(50 * time.Millisecond)
			close(release)
			if a, ok := within(r, "the holder to settle", done); ok {
				r.out("holder", a.out, a.err)
			}
			if a, ok := within(r, "the waiting call", waited); ok {
				r.out("waiting", a.out, a.err)
			}
		},
		want: []string{
			"no wait: in flight holder=#1 err=nil",
			"holder: ran claim=#1 err=nil",
			"waiting: duplicate holder=#1 err=nil",
		},
	},
	{
		name: "forever judges a silent holder stale",
		run: func(ctx context.Context, db once.DB, r *transcript) {
			for _, safe := range []bool{false, true} {
				g := once.Forever{Name: fmt.Sprint("mem.Stale.", safe), Stale: 200 * time.Millisecond, NoHeartbeat: true, RepeatSafe: safe}
				ref := once.Ref{Key: "job"}
				running, release, done := make(chan struct{}), make(chan struct{}), make(chan struct{})
				go func() {
					defer close(done)
					out, err := g.Do(ctx, db, ref, func(context.Context) error { close(running); <-release; return nil })
					r.out(fmt.Sprint("repeat-safe ", safe, " silent holder returns"), out, err)
				}()
				if _, ok := within(r, "the holder", running); !ok {
					return
				}
				time.Sleep(400 * time.Millisecond)
				out, err := g.Do(ctx, db, ref, ok)
				r.out(fmt.Sprint("repeat-safe ", safe, " after the window"), out, err)
				close(release)
				within(r, "the holder", done)
				out, err = g.Do(ctx, db, ref, ok)
				r.out(fmt.Sprint("repeat-safe ", safe, " later"), out, err)
			}
		},
		want: []string{
			"repeat-safe false after the window: duplicate holder=#1 err=uncertain",
			// The holder knew its outcome: its settle is accepted over the mark.
			"repeat-safe false silent holder returns: ran claim=#1 err=nil",
			"repeat-safe false later: duplicate holder=#1 err=nil",
			"repeat-safe true after the window: ran claim=#2 err=nil",
			"repeat-safe true silent holder returns: ran claim=#2 err=not-owner",
			"repeat-safe true later: duplicate holder=#2 err=nil",
		},
	},
	{
		name: "forever heartbeat keeps a long function alive",
		run: func(ctx context.Context, db once.DB, r *transcript) {
			g := once.Forever{Name: "mem.Beat", Stale: time.Second}
			ref := once.Ref{Key: "long"}
			running, release, done := make(chan struct{}), make(chan struct{}), make(chan struct{})
			go func() {
				defer close(done)
				out, err := g.Do(ctx, db, ref, func(context.Context) error { close(running); <-release; return nil })
				r.out("long holder", out, err)
			}()
			if _, ok := within(r, "the holder", running); !ok {
				return
			}
			time.Sleep(1500 * time.Millisecond)
			out, err := g.Do(ctx, db, ref, ok)
			r.out("after the window", out, err)
			close(release)
			within(r, "the holder", done)
		},
		want: []string{
			"after the window: in flight holder=#1 err=nil",
			"long holder: ran claim=#1 err=nil",
		},
	},
	{
		name: "forever forgets an outcome after Retain",
		run: func(ctx context.Context, db once.DB, r *transcript) {
			g := once.Forever{Name: "mem.Retain", Retain: time.Second}
			for _, step := range []string{"first", "within", "after"} {
				if step == "after" {
					time.Sleep(1500 * time.Millisecond)
				}
				out, err := g.Do(ctx, db, once.Ref{Key: "k"}, ok)
				r.out(step, out, err)
			}
		},
		want: []string{
			"first: ran claim=#1 err=nil",
			"within: duplicate holder=#1 err=nil",
			"after: ran claim=#2 err=nil",
		},
	},
	{
		name: "forever storm runs once",
		run: func(ctx context.Context, db once.DB, r *transcript) {
			g := once.Forever{Name: "mem.Storm", Wait: 5 * time.Second}
			fireAtOnce(r, 24, func() (once.Outcome, error) {
				v, out, err := once.ForeverValue(ctx, db, g, once.Ref{Key: "k"}, func(context.Context) (string, error) {
					time.Sleep(20 * time.Millisecond)
					return "v", nil
				})
				if v != "v" {
					err = fmt.Errorf("value %q", v)
				}
				return out, err
			})
		},
		want: []string{"storm of 24: 23 duplicate err=nil", "storm of 24: 1 ran err=nil"},
	},
	{
		name: "statement keeps a cap per key and window",
		run: func(ctx context.Context, db once.DB, r *transcript) {
			g := once.Statement{Name: "mem.Allowance", Cap: 3}
			used, reserved, err := g.Reserve(ctx, db, "org/1/2026-12", 2)
			r.say("reserve 2: used %d reserved %v err=%s", used, reserved, errKind(err))
			out, err := g.Do(ctx, db, "org/1/2026-12", 2, ok)
			r.out("do 2", out, err)
			out, err = g.Do(ctx, db, "org/1/2026-12", 1, func(context.Context) error { return errors.New("not delivered") })
			r.out("do 1 failing", out, err)
			out, err = g.Do(ctx, db, "org/1/2026-12", 1, ok)
			r.out("do 1", out, err)
			out, err = g.Do(ctx, db, "org/1/2027-01", 3, ok)
			r.out("next window do 3", out, err)
			r.say("refund 4: err=%s", errKind(g.Refund(ctx, db, "org/1/2026-12", 4)))
			r.say("refund 2: err=%s", errKind(g.Refund(ctx, db, "org/1/2026-12", 2)))
			used, reserved, err = g.Reserve(ctx, db, "org/1/2026-12", 3)
			r.say("reserve 3: used %d reserved %v err=%s", used, reserved, errKind(err))
			out, err = once.Statement{Name: "mem.Zero"}.Do(ctx, db, "k", 1, ok)
			r.out("cap 0", out, err)
		},
		want: []string{
			"reserve 2: used 2 reserved true err=nil",
			"do 2: refused count=2 err=nil",
			"do 1 failing: ran count=3 err=not delivered",
			"do 1: ran count=3 err=nil",
			"next window do 3: ran count=3 err=nil",
			"refund 4: err=invalid",
			"refund 2: err=nil",
			"reserve 3: used 1 reserved false err=nil",
			"cap 0: refused err=nil",
		},
	},
	{
		name: "statement storm serves the cap",
		run: func(ctx context.Context, db once.DB, r *transcript) {
			g := once.Statement{Name: "mem.StatementStorm", Cap: 5}
			fireAtOnce(r, 32, func() (once.Outcome, error) {
				out, err := g.Do(ctx, db, "k", 1, ok)
				out.Count = 0 // the count a call read depends on the order
				return out, err
			})
			used, _, _ := g.Reserve(ctx, db, "k", 1)
			r.say("used after %d", used)
		},
		want: []string{"storm of 32: 5 ran err=nil", "storm of 32: 27 refused err=nil", "used after 5"},
	},
	{
		name: "episode fires once until rearmed",
		run: func(ctx context.Context, db once.DB, r *transcript) {
			g := once.Episode{Name: "mem.Alert"}
			rearmed, err := g.Rearm(ctx, db, "serp")
			r.say("rearm before any firing: %v err=%s", rearmed, errKind(err))
			for _, step := range []string{"fire", "again"} {
				out, err := g.Do(ctx, db, "serp", ok)
				r.out(step, out, err)
			}
			for range 2 {
				rearmed, err := g.Rearm(ctx, db, "serp")
				r.say("rearm: %v err=%s", rearmed, errKind(err))
			}
			out, err := g.Do(ctx, db, "serp", func(context.Context) error { return errors.New("send failed") })
			r.out("fire failing", out, err)
			out, err = g.Do(ctx, db, "serp", ok)
			r.out("fire after the failure", out, err)
		},
		want: []string{
			"rearm before any firing: false err=nil",
			"fire: ran firing=1 err=nil",
			"again: duplicate err=nil",
			"rearm: true err=nil",
			"rearm: false err=nil",
			"fire failing: ran firing=2 err=send failed",
			"fire after the failure: ran firing=3 err=nil",
		},
	},
	{
		name: "episode storm fires once",
		run: func(ctx context.Context, db once.DB, r *transcript) {
			g := once.Episode{Name: "mem.EpisodeStorm"}
			fireAtOnce(r, 24, func() (once.Outcome, error) { return g.Do(ctx, db, "k", ok) })
		},
		want: []string{"storm of 24: 23 duplicate err=nil", "storm of 24: 1 ran err=nil"},
	},
	{
		name: "open redirects while open and starts again after",
		run: func(ctx context.Context, db once.DB, r *transcript) {
			g := once.Open{Name: "mem.Research"}
			c, out, err := g.Claim(ctx, db, "org/1")
			r.out("claim", out, err)
			out, err = g.Do(ctx, db, "org/1", ok)
			r.out("do while open", out, err)
			if c == nil {
				return
			}
			open, err := c.Open(ctx, db)
			r.say("open: %v err=%s", open, errKind(err))
			r.say("heartbeat: err=%s", errKind(c.Heartbeat(ctx, db)))
			r.say("finish: err=%s", errKind(c.Finish(ctx, db)))
			r.say("finish again: err=%s", errKind(c.Finish(ctx, db)))
			r.say("fail after finish: err=%s", errKind(c.Fail(ctx, db, "late")))
			open, err = c.Open(ctx, db)
			r.say("open after finish: %v err=%s", open, errKind(err))
			out, err = g.Do(ctx, db, "org/1", func(context.Context) error { return errors.New("run failed") })
			r.out("do failing", out, err)
			out, err = g.Do(ctx, db, "org/1", func(ctx context.Context) error {
				c, _ := once.ClaimFrom(ctx)
				r.say("running under claim %s", r.id(fmt.Sprint(c.ID)))
				return nil
			})
			r.out("do", out, err)
		},
		want: []string{
			"claim: ran claim=#1 err=nil",
			"do while open: in flight holder=#1 err=nil",
			"open: true err=nil",
			"heartbeat: err=nil",
			"finish: err=nil",
			"finish again: err=not-owner",
			"fail after finish: err=not-owner",
			"open after finish: false err=nil",
			"do failing: ran claim=#2 err=run failed",
			"running under claim #3",
			"do: ran claim=#3 err=nil",
		},
	},
	{
		name: "open closes a silent claim as stale",
		run: func(ctx context.Context, db once.DB, r *transcript) {
			// The window is wide next to the sleeps: a loaded machine (-race, CI) only
			// lengthens them, which the claim within the window must survive.
			g := once.Open{Name: "mem.Export", Stale: 3 * time.Second}
			c, out, err := g.Claim(ctx, db, "file/1")
			r.out("claim", out, err)
			time.Sleep(2 * time.Second)
			if c != nil {
				r.say("heartbeat: err=%s", errKind(c.Heartbeat(ctx, db)))
			}
			time.Sleep(1500 * time.Millisecond) // 3.5 s since the claim, 1.5 s since the heartbeat
			_, out, err = g.Claim(ctx, db, "file/1")
			r.out("claim within the window since the heartbeat", out, err)
			time.Sleep(3500 * time.Millisecond)
			_, out, err = g.Claim(ctx, db, "file/1")
			r.out("claim after the window", out, err)
			if c != nil {
				open, err := c.Open(ctx, db)
				r.say("old claim open: %v err=%s", open, errKind(err))
				r.say("old claim heartbeat: err=%s", errKind(c.Heartbeat(ctx, db)))
				r.say("old claim finish: err=%s", errKind(c.Finish(ctx, db)))
			}
		},
		want: []string{
			"claim: ran claim=#1 err=nil",
			"heartbeat: err=nil",
			"claim within the window since the heartbeat: in flight holder=#1 err=nil",
			"claim after the window: ran claim=#2 err=nil",
			"old claim open: false err=nil",
			"old claim heartbeat: err=not-owner",
			"old claim finish: err=not-owner",
		},
	},
	{
		name: "open storm starts once",
		run: func(ctx context.Context, db once.DB, r *transcript) {
			g := once.Open{Name: "mem.OpenStorm"}
			fireHolding(r, 24, func(fn func(context.Context) error) (once.Outcome, error) {
				out, err := g.Do(ctx, db, "k", fn)
				out.Claim, out.Holder = "", "" // ids checked elsewhere; here the count
				return out, err
			})
		},
		want: []string{"storm of 24: 23 in flight err=nil", "storm of 24: 1 ran err=nil"},
	},
	{
		name: "lease has one holder, a fence, and an expiry",
		run: func(ctx context.Context, db once.DB, r *transcript) {
			g := once.Lease{Name: "mem.Lock", TTL: time.Minute}
			h, out, err := g.Acquire(ctx, db, "org/1")
			r.out("acquire", out, err)
			_, out, err = g.Acquire(ctx, db, "org/1")
			r.out("acquire while held", out, err)
			out, err = g.Do(ctx, db, "org/1", ok)
			r.out("do while held", out, err)
			if h == nil {
				return
			}
			r.say("extend: err=%s", errKind(h.Extend(ctx, db, time.Minute)))
			back, err := g.Restore(ctx, db, "org/1", h.Token)
			r.say("restore: fence %d err=%s", fence(back), errKind(err))
			_, err = g.Restore(ctx, db, "org/1", "not-the-token")
			r.say("restore another token: err=%s", errKind(err))
			r.say("release: err=%s", errKind(h.Release(ctx, db)))
			r.say("release again: err=%s", errKind(h.Release(ctx, db)))
			out, err = g.Do(ctx, db, "org/1", func(ctx context.Context) error {
				in, _ := once.LeaseFrom(ctx)
				r.say("running under fence %d", in.Fence)
				return nil
			})
			r.out("do", out, err)

			short := once.Lease{Name: "mem.Lock", TTL: 100 * time.Millisecond}
			old, out, err := short.Acquire(ctx, db, "org/2")
			r.out("short acquire", out, err)
			time.Sleep(300 * time.Millisecond)
			if old != nil {
				r.say("extend after expiry: err=%s", errKind(old.Extend(ctx, db, time.Minute)))
			}
			_, out, err = short.Acquire(ctx, db, "org/2")
			r.out("acquire after expiry", out, err)
			if old != nil {
				r.say("old holder release: err=%s", errKind(old.Release(ctx, db)))
			}
		},
		want: []string{
			"acquire: ran fence=1 err=nil",
			"acquire while held: busy err=nil",
			"do while held: busy err=nil",
			"extend: err=nil",
			"restore: fence 1 err=nil",
			"restore another token: err=not-owner",
			"release: err=nil",
			"release again: err=not-owner",
			"running under fence 2",
			"do: ran fence=2 err=nil",
			"short acquire: ran fence=1 err=nil",
			"extend after expiry: err=not-owner",
			"acquire after expiry: ran fence=2 err=nil",
			"old holder release: err=not-owner",
		},
	},
	{
		name: "lease waits for its holder",
		run: func(ctx context.Context, db once.DB, r *transcript) {
			g := once.Lease{Name: "mem.Wait", TTL: time.Minute}
			h, out, err := g.Acquire(ctx, db, "k")
			r.out("acquire", out, err)
			done := make(chan answer, 1)
			go func() {
				w := g
				w.Wait = 5 * time.Second
				out, err := w.Do(ctx, db, "k", ok)
				done <- answer{out, err}
			}()
			time.Sleep(100 * time.Millisecond)
			if h != nil {
				r.say("release: err=%s", errKind(h.Release(ctx, db)))
			}
			if a, ok := within(r, "the waiting call", done); ok {
				r.out("waiting do", a.out, a.err)
			}
		},
		want: []string{"acquire: ran fence=1 err=nil", "release: err=nil", "waiting do: ran fence=2 err=nil"},
	},
	{
		name: "lease storm has one holder",
		run: func(ctx context.Context, db once.DB, r *transcript) {
			g := once.Lease{Name: "mem.LeaseStorm", TTL: time.Minute}
			fireHolding(r, 24, func(fn func(context.Context) error) (once.Outcome, error) {
				return g.Do(ctx, db, "k", fn)
			})
		},
		want: []string{"storm of 24: 23 busy err=nil", "storm of 24: 1 ran err=nil"},
	},
	{
		name: "request and provider need no database",
		run: func(ctx context.Context, _ once.DB, r *transcript) {
			rctx := once.WithRequestScope(ctx)
			for range 2 {
				v, out, err := once.RequestValue(rctx, once.Request{Name: "mem.User"}, "7", func(context.Context) (string, error) { return "ada", nil })
				r.out("request "+v, out, err)
			}
			out, err := once.Provider{Prefix: "fee"}.Do(ctx, "reply/1", func(ctx context.Context) error {
				k, _ := once.ProviderKeyFrom(ctx)
				r.say("provider key %s", k)
				return nil
			})
			r.out("provider", out, err)
		},
		want: []string{"request ada: ran err=nil", "request ada: duplicate err=nil", "provider key fee-reply/1", "provider: ran err=nil"},
	},
}

func fence(h *once.Held) int64 {
	if h == nil {
		return 0
	}
	return h.Fence
}

// runScenario runs sc on db and returns what it observed.
func runScenario(db once.DB, sc memoryScenario) []string {
	r := &transcript{}
	sc.run(context.Background(), db, r)
	return r.lines
}

func checkScenarios(t *testing.T, db func(t *testing.T) once.DB) {
	for _, sc := range memoryScenarios {
		t.Run(sc.name, func(t *testing.T) {
			t.Parallel()
			if got := runScenario(db(t), sc); !slices.Equal(got, sc.want) {
				t.Errorf("observed:\n\t%s\nwant:\n\t%s", strings.Join(got, "\n\t"), strings.Join(sc.want, "\n\t"))
			}
		})
	}
}

func TestMemory_MatchesPostgreSQL(t *testing.T) {
	t.Parallel()
	pool := setup(t, 32)
	checkScenarios(t, func(*testing.T) once.DB { return pool })
}

func TestMemory_MatchesTheScenarios(t *testing.T) {
	t.Parallel()
	checkScenarios(t, func(*testing.T) once.DB { return oncetest.Memory() })
}

// wrongMemory is a stand-in whose state is wrong on purpose: the negative controls.
type wrongMemory struct {
	once.DB // the pgx methods, which refuse
	store   func() *memstore.Store
}

func (w wrongMemory) MemoryStore() *memstore.Store { return w.store() }

// TestMemory_WrongStandInsFailTheTable shows the table can fail: a stand-in that forgets
// every call's state, and one whose clock stands still, each give other observations.
func TestMemory_WrongStandInsFailTheTable(t *testing.T) {
	t.Parallel()
	frozen := memstore.New()
	stopped := time.Now()
	frozen.Now = func() time.Time { return stopped }
	for _, c := range []struct {
		name  string
		db    func() once.DB
		fails []string // scenarios that must observe something else
	}{
		{"forgets", func() once.DB { return wrongMemory{oncetest.Memory(), memstore.New} }, []string{
			"forever replays the recorded value", "forever in flight answers at once or waits for the outcome",
			"forever storm runs once", "statement keeps a cap per key and window", "episode fires once until rearmed",
			"open redirects while open and starts again after", "lease has one holder, a fence, and an expiry",
		}},
		{"clock stands still", func() once.DB {
			s := memstore.New()
			s.Now = frozen.Now
			return wrongMemory{oncetest.Memory(), func() *memstore.Store { return s }}
		}, []string{
			"forever judges a silent holder stale", "forever forgets an outcome after Retain",
			"open closes a silent claim as stale",
		}},
	} {
		t.Run(c.name, func(t *testing.T) {
			t.Parallel()
			var failed []string
			var mu sync.Mutex
			var wg sync.WaitGroup
			for _, sc := range memoryScenarios {
				wg.Go(func() {
					if !slices.Equal(runScenario(c.db(), sc), sc.want) {
						mu.Lock()
						failed = append(failed, sc.name)
						mu.Unlock()
					}
				})
			}
			wg.Wait()
			for _, name := range c.fails {
				if !slices.Contains(failed, name) {
					t.Errorf("scenario %q passed on a stand-in that %s", name, c.name)
				}
			}
		})
	}
}

// BenchmarkMemory compares a guard's call on the stand-in with the same call on PostgreSQL,
// in one run (see compare): what a unit test saves, and a check that the stand-in is no
// slower than what it stands in for.
//
//	go test -bench 'Memory/.*/memory-vs-postgres' -run '^$' -benchtime 2000x ./runtime/
func BenchmarkMemory(b *testing.B) {
	pool := benchPool(b)
	mem := oncetest.Memory()
	ctx := context.Background()
	on := func(db once.DB, call func(db once.DB, key string) error) benchOp {
		return func(*testing.B, *benchKeys) func() error { return func() error { return call(db, "k") } }
	}
	fresh := func(db once.DB, call func(db once.DB, key string) error) benchOp {
		return func(_ *testing.B, keys *benchKeys) func() error { return func() error { return call(db, keys.next()) } }
	}
	forever := once.Forever{Name: "bench.MemoryForever"}
	foreverCall := func(db once.DB, key string) error {
		_, err := forever.Do(context.Background(), db, once.Ref{Key: key}, ok)
		return err
	}
	for _, db := range []once.DB{pool, mem} {
		if err := foreverCall(db, "k"); err != nil {
			b.Fatal(err)
		}
	}
	b.Run("forever-fresh", func(b *testing.B) {
		compare(b, [2]string{"postgres", "memory"}, [2]benchOp{fresh(pool, foreverCall), fresh(mem, foreverCall)})
	})
	b.Run("forever-replay", func(b *testing.B) {
		compare(b, [2]string{"postgres", "memory"}, [2]benchOp{on(pool, foreverCall), on(mem, foreverCall)})
	})
	episode := once.Episode{Name: "bench.MemoryEpisode"}
	episodeCall := func(db once.DB, key string) error {
		_, err := episode.Do(ctx, db, key, ok)
		return err
	}
	b.Run("episode-fresh", func(b *testing.B) {
		compare(b, [2]string{"postgres", "memory"}, [2]benchOp{fresh(pool, episodeCall), fresh(mem, episodeCall)})
	})
}
