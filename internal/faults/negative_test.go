package faults

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
	"github.com/oncekit/once/internal/pgtest"
	once "github.com/oncekit/once/runtime"
)

func execAll(sqls ...string) func(context.Context, *pgxpool.Pool) error {
	return func(ctx context.Context, db *pgxpool.Pool) error {
		for _, s := range sqls {
			if _, err := db.Exec(ctx, s); err != nil {
				return err
			}
		}
		return nil
	}
}

// uncertainOperations makes the forever keys of the first round uncertain before the run,
// for the operator loop to resolve: without faults no call leaves one.
const uncertainOperations = `INSERT INTO once.operations (name, scope, key, id, token, state, settled_at, uncertain_since, error)
SELECT 'faults', '', 'forever-' || i, gen_random_uuid(), 'seeded', 'uncertain', now(), now(), 'made uncertain by the test'
FROM generate_series(0, 1) AS i`

// trigger creates a plpgsql trigger function with body and attaches it to table.
func trigger(name, table, when, body string) string {
	return `CREATE FUNCTION ` + name + `() RETURNS trigger LANGUAGE plpgsql AS $$ BEGIN ` + body + ` END $$;
CREATE TRIGGER ` + name + ` ` + when + ` ON ` + table + ` FOR EACH ROW EXECUTE FUNCTION ` + name + `();`
}

// Each invariant's negative control: the runtime's database broken from outside (a trigger
// that defeats the index, the fence or the clean-up a guard relies on, an outcome rewritten
// after it settled), or the guard's statements run without its fence, and the checker must
// report the invariant. No fault is injected: the breakage alone must be caught.
func TestChecker_NegativeControls(t *testing.T) {
	controls := []struct {
		invariant   string
		kinds       []string
		setup       func(context.Context, *pgxpool.Pool) error
		beforeCheck func(context.Context, *pgxpool.Pool) error
	}{
		// Every claim made a row of its own: the primary key no longer meets a second claim.
		{"forever-once", []string{"forever"}, execAll(trigger("split_claims", "once.operations", "BEFORE INSERT",
			`NEW.key := NEW.key || '#' || NEW.token; RETURN NEW;`)), nil},
		{"forever-once", []string{"http"}, execAll(trigger("split_claims", "once.operations", "BEFORE INSERT",
			`NEW.key := NEW.key || '#' || NEW.token; RETURN NEW;`)), nil},
		// Split claims of a repeat-safe operation: each gets an id, and so a provider key, of
		// its own.
		{"provider-once", []string{"provider"}, execAll(trigger("split_claims", "once.operations", "BEFORE INSERT",
			`NEW.key := NEW.key || '#' || NEW.token; RETURN NEW;`)), nil},
		// The request's effect run by each caller, without the guard.
		{"request-once", []string{"request-unguarded"}, nil, nil},
		// The partial unique index no longer meets a second open claim.
		{"open-window", []string{"open"}, execAll(trigger("split_claims", "once.open_claims", "BEFORE INSERT",
			`NEW.key := NEW.key || '#' || NEW.token; RETURN NEW;`)), nil},
		// The latch never stays set: every call fires.
		{"episode-once", []string{"episode"}, execAll(trigger("unlatch", "once.latches", "BEFORE INSERT OR UPDATE",
			`NEW.fired_at := NULL; RETURN NEW;`)), nil},
		// A reserved unit is not kept: the slots never fill.
		{"statement-cap", []string{"statement"}, execAll(trigger("drop_slot", "once.counter_slots", "AFTER INSERT",
			`DELETE FROM once.counter_slots WHERE name = NEW.name AND key = NEW.key AND slot = NEW.slot; RETURN NULL;`)), nil},
		// A lease changes hands without its fence growing.
		{"lease-fence", []string{"lease"}, execAll(trigger("stuck_fence", "once.leases", "BEFORE UPDATE",
			`NEW.fence := OLD.fence; RETURN NEW;`)), nil},
		// The decision made without the guard's lock.
		{"transaction-once", []string{"transaction-unfenced"}, nil, nil},
		// A clean-up that deleted settled outcomes: the keys run again.
		{"settled-kept", []string{"forever"}, nil, execAll(`DELETE FROM once.operations WHERE name = 'faults'`)},
		// The recorded outcome changed under the duplicates that replayed it.
		{"answer-consistent", []string{"forever"}, nil, execAll(`UPDATE once.operations SET result = '"rewritten"' WHERE name = 'faults'`)},
		// Stale claims never closed (the clean-up withdrawn), and a holder that died.
		{"open-bound", []string{"open"}, func(ctx context.Context, db *pgxpool.Pool) error {
			if err := execAll(trigger("keep_stale", "once.open_claims", "BEFORE UPDATE",
				`IF NEW.state = 'stale' THEN RETURN NULL; END IF; RETURN NEW;`))(ctx, db); err != nil {
				return err
			}
			_, _, err := once.Open{Name: "faults", Stale: time.Second}.Claim(ctx, db, "open-0")
			return err
		}, nil},
		// A resolution that does not hold: done or failed turned back into released, so the
		// next call runs the operation again.
		{"resolved-kept", []string{"forever", "operator"}, execAll(uncertainOperations, trigger("unresolve", "once.operations", "BEFORE UPDATE",
			`IF OLD.state = 'uncertain' AND NEW.state IN ('done', 'failed') THEN NEW.state := 'released'; END IF; RETURN NEW;`)), nil},
		// A resolution that leaves the operation uncertain: the next resolution of it lands too.
		{"resolve-refused", []string{"forever", "operator"}, execAll(uncertainOperations, trigger("stay_uncertain", "once.operations", "BEFORE UPDATE",
			`IF OLD.state = 'uncertain' AND NEW.state IN ('done', 'failed', 'released') THEN NEW.state := 'uncertain'; NEW.uncertain_since := OLD.uncertain_since; END IF; RETURN NEW;`)), nil},
		// A refund that gives back every unit of every key, not the one asked for.
		{"refund-bounded", []string{"statement", "operator"}, execAll(trigger("refund_all", "once.audit", "AFTER INSERT",
			`IF NEW.action LIKE 'refund%' THEN DELETE FROM once.counter_slots WHERE name = 'faults'; END IF; RETURN NULL;`)), nil},
		// A forced release that sets the fence back: the next holder's is no higher.
		{"release-fence", []string{"lease", "operator"}, execAll(trigger("fence_back", "once.leases", "BEFORE UPDATE",
			`IF NEW.released_by = 'operator' THEN NEW.fence := 1; END IF; RETURN NEW;`)), nil},
		// A delivered follow-up is owed again, under another provider key: the provider sees a
		// new request and does its effect again.
		{"followup-once", []string{"followup"}, execAll(trigger("redeliver", "once.followups", "BEFORE UPDATE",
			`IF NEW.state = 'delivered' THEN NEW.state := 'pending'; NEW.provider_key := NEW.provider_key || '-' || NEW.attempts; END IF; RETURN NEW;`)), nil},
		// The settle's follow-ups are dropped: operations settle with nothing to deliver.
		{"followup-delivered", []string{"followup"}, execAll(trigger("drop_followups", "once.followups", "BEFORE INSERT",
			`RETURN NULL;`)), nil},
		// A revive that does not take: the follow-up stays dead, and the revive says it was
		// applied.
		{"followup-revived", []string{"followup", "operator"}, execAll(trigger("stay_dead", "once.followups", "BEFORE UPDATE",
			`IF OLD.state = 'dead' AND NEW.state = 'pending' THEN RETURN NULL; END IF; RETURN NEW;`)), nil},
		// A delivery is never marked: the follow-up stays pending however often it is delivered.
		{"followup-bound", []string{"followup"}, execAll(trigger("never_delivered", "once.followups", "BEFORE UPDATE",
			`IF NEW.state = 'delivered' THEN RETURN NULL; END IF; RETURN NEW;`)), nil},
		// Audit rows dropped: the actions commit without them.
		{"audit-committed", []string{"lease", "operator"}, execAll(trigger("drop_audit", "once.audit", "BEFORE INSERT",
			`RETURN NULL;`)), nil},
	}
	for _, c := range controls {
		t.Run(c.invariant+"/"+c.kinds[0], func(t *testing.T) {
			t.Parallel()
			// The operator loop's actions are slower than the guards' calls and drawn among
			// several: its controls run longer, so that a busy machine still makes enough.
			d, callers := 4*time.Second, 8
			if slices.Contains(c.kinds, "operator") {
				// Fewer callers leave the operator loop connections of the pool's 12.
				d, callers = 6*time.Second, 4
			}
			// A machine busy with the other controls may make too few of the calls a
			// violation needs (a follow-up that dies, then a revive): a run that shows none
			// is made again, twice as long, on a database of its own. The checker fails the
			// control only if no run shows the violation.
			for attempt := 1; ; attempt++ {
				db := pgtest.NewDatabase(t)
				res, err := Run(context.Background(), Config{Seed: 1, Duration: d, URL: db.URL, DirectURL: db.DirectURL,
					NoFaults: true, Deadline: 20 * time.Second, Work: 300 * time.Millisecond, Kinds: c.kinds, Keys: 2, Callers: callers, Stale: time.Second, Setup: c.setup, BeforeCheck: c.beforeCheck})
				if err != nil {
					t.Fatal(err)
				}
				var found []string
				for _, v := range res.Violations {
					if v.Invariant == c.invariant {
						t.Logf("reported, as it must be:\n%s", v)
						return
					}
					found = append(found, v.Invariant)
				}
				calls, _, _ := res.History.Counts()
				if attempt == 3 {
					t.Fatalf("the checker did not report %s on a runtime broken for it in three runs (the last reported %s); calls:\n%s", c.invariant, strings.Join(found, ", "), FormatCounts(calls))
				}
				t.Logf("run %d of %s did not show %s; calls:\n%s", attempt, d, c.invariant, FormatCounts(calls))
				d *= 2
			}
		})
	}
}
