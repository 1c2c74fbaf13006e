package faults

import (
	"context"
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
	}
	for _, c := range controls {
		t.Run(c.invariant+"/"+c.kinds[0], func(t *testing.T) {
			t.Parallel()
			db := pgtest.NewDatabase(t)
			res, err := Run(context.Background(), Config{Seed: 1, Duration: 2 * time.Second, URL: db.URL, DirectURL: db.DirectURL,
				NoFaults: true, Deadline: 20 * time.Second, Work: 300 * time.Millisecond, Kinds: c.kinds, Keys: 2, Callers: 8, Stale: time.Second, Setup: c.setup, BeforeCheck: c.beforeCheck})
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
			t.Fatalf("the checker did not report %s on a runtime broken for it (it reported %s); calls:\n%s", c.invariant, strings.Join(found, ", "), FormatCounts(calls))
		})
	}
}
