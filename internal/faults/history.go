package faults

import (
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"
)

// Call is one guarded call as its caller saw it: when it was made and answered, and what it
// was told.
type Call struct {
	ID     int
	Kind   string
	Key    string
	Start  time.Time
	End    time.Time
	Status string // the Outcome's status, "" when the call failed before the promise
	Err    string // the error's text, "" for none
	// NotOwner says the error wraps ErrNotOwner: the guard reported that its claim or lease
	// was taken from it while the function ran (a documented window, not a violation).
	NotOwner bool
	Value    string // the value the caller got back (Forever), or "" for none
	Firing   int64  // Episode's firing number
	Fence    int64  // Lease's fence
	Count    int64  // Statement's count
	Cap      int64  // Statement's cap
	// An operator call's action ("resolve done", "force-release", "refund", ...), the
	// operation it resolved, the units it refunded (N), and whether it resolved an operation
	// known to be settled already (Repeat: it must be refused). Count is what a reset gave
	// back, or a sweep or a reap closed.
	Action string
	Target string
	N      int64
	Repeat bool
}

// Effect is one run of a guarded function: the side effect the guard keeps to its promise.
type Effect struct {
	Call   int
	Kind   string
	Key    string
	Start  time.Time
	End    time.Time
	Value  string
	Firing int64
	Fence  int64
}

// Fault is one fault injected into the run.
type Fault struct {
	Kind  string
	Start time.Time
	End   time.Time
	Note  string
}

// History is the record of a run: calls, effects and faults, with their times. Its methods
// are safe for concurrent use.
type History struct {
	mu      sync.Mutex
	calls   []Call
	effects []Effect
	faults  []Fault
	rearms  map[string][]time.Time // episode key -> times a rearm was sent
	nextID  int
}

// NewHistory returns an empty history.
func NewHistory() *History { return &History{rearms: map[string][]time.Time{}} }

// Begin records a call's invocation and returns its id, for End.
func (h *History) Begin(kind, key string) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.nextID++
	h.calls = append(h.calls, Call{ID: h.nextID, Kind: kind, Key: key, Start: time.Now()})
	return h.nextID
}

// End records the answer of call id.
func (h *History) End(id int, fill func(*Call)) {
	now := time.Now()
	h.mu.Lock()
	defer h.mu.Unlock()
	c := &h.calls[id-1]
	c.End = now
	fill(c)
}

// Effect records one run of a guarded function and returns a func that marks its end.
func (h *History) Effect(e Effect) (done func()) {
	e.Start = time.Now()
	h.mu.Lock()
	h.effects = append(h.effects, e)
	i := len(h.effects) - 1
	h.mu.Unlock()
	return func() {
		h.mu.Lock()
		h.effects[i].End = time.Now()
		h.mu.Unlock()
	}
}

// Rearm records that a rearm of an episode key was sent (whether or not it landed).
func (h *History) Rearm(key string) {
	h.mu.Lock()
	h.rearms[key] = append(h.rearms[key], time.Now())
	h.mu.Unlock()
}

// Inject records a fault and returns a func that marks its end.
func (h *History) Inject(kind, note string) (healed func()) {
	h.mu.Lock()
	h.faults = append(h.faults, Fault{Kind: kind, Start: time.Now(), Note: note})
	i := len(h.faults) - 1
	h.mu.Unlock()
	return func() {
		h.mu.Lock()
		h.faults[i].End = time.Now()
		h.mu.Unlock()
	}
}

// Snapshot returns copies of the calls, effects and faults recorded so far.
func (h *History) Snapshot() ([]Call, []Effect, []Fault, map[string][]time.Time) {
	h.mu.Lock()
	defer h.mu.Unlock()
	r := make(map[string][]time.Time, len(h.rearms))
	for k, v := range h.rearms {
		r[k] = append([]time.Time(nil), v...)
	}
	return append([]Call(nil), h.calls...), append([]Effect(nil), h.effects...), append([]Fault(nil), h.faults...), r
}

// Counts sums the history: calls per kind and status, effects per kind, faults per kind.
func (h *History) Counts() (calls, effects, faults map[string]int) {
	cs, es, fs, _ := h.Snapshot()
	calls, effects, faults = map[string]int{}, map[string]int{}, map[string]int{}
	for _, c := range cs {
		st := c.Status
		switch {
		case c.Err != "" && st == "":
			st = "error"
		case c.Err != "":
			st += " error"
		case st == "":
			st = "answered"
		}
		if c.Kind == "operator" {
			calls[c.Kind+" "+c.Action+" "+st]++
			continue
		}
		calls[c.Kind+" "+st]++
	}
	for _, e := range es {
		effects[e.Kind]++
	}
	for _, f := range fs {
		faults[f.Kind]++
	}
	return
}

// FormatCounts writes a count map sorted by name.
func FormatCounts(m map[string]int) string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for _, k := range keys {
		fmt.Fprintf(&b, "  %-28s %d\n", k, m[k])
	}
	return b.String()
}

// keyState counts the effects recorded on kind's key and the calls of it not yet answered.
func (h *History) keyState(kind, key string) (effects, running int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for _, e := range h.effects {
		if e.Kind == kind && e.Key == key {
			effects++
		}
	}
	for _, c := range h.calls {
		if c.Kind == kind && c.Key == key && c.End.IsZero() {
			running++
		}
	}
	return effects, running
}

// setFiring stamps the effects of call id with the episode's firing number, which the guard
// reports only in the Outcome once the function returned.
func (h *History) setFiring(id int, firing int64) {
	h.mu.Lock()
	defer h.mu.Unlock()
	for i := range h.effects {
		if h.effects[i].Call == id {
			h.effects[i].Firing = firing
		}
	}
}
