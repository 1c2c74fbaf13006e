package onceschema

import (
	"regexp"
	"strconv"
	"strings"
)

// runtimeIndexes are the indexes of the runtime's schema, as pg_get_indexdef prints them once
// it is applied (PostgreSQL names a primary key's index <table>_pkey, or after its
// constraint, and a UNIQUE constraint's after the constraint). The unique ones are what the
// runtime's promises rest on; the others keep its sweeps and operator lists fast. A test
// applies the schema and compares this list with the catalog, both ways.
var runtimeIndexes = []struct{ table, name, def string }{
	{"audit", "audit_at", "CREATE INDEX audit_at ON once.audit USING btree (at DESC, id DESC)"},
	{"audit", "audit_pkey", "CREATE UNIQUE INDEX audit_pkey ON once.audit USING btree (id)"},
	{"audit", "audit_target", "CREATE INDEX audit_target ON once.audit USING btree (target, id)"},
	{"checkpoints", "checkpoints_pkey", "CREATE UNIQUE INDEX checkpoints_pkey ON once.checkpoints USING btree (operation_id, step)"},
	{"counter_full", "counter_full_pkey", "CREATE UNIQUE INDEX counter_full_pkey ON once.counter_full USING btree (name, key)"},
	{"counter_slots", "counter_slots_pkey", "CREATE UNIQUE INDEX counter_slots_pkey ON once.counter_slots USING btree (name, key, slot)"},
	{"duplicate_days", "duplicate_days_pkey", "CREATE UNIQUE INDEX duplicate_days_pkey ON once.duplicate_days USING btree (day, name, kind, status)"},
	{"followups", "followups_dead", "CREATE INDEX followups_dead ON once.followups USING btree (id) WHERE (state = 'dead'::text)"},
	{"followups", "followups_due", "CREATE INDEX followups_due ON once.followups USING btree (due_at) WHERE (state = 'pending'::text)"},
	{"followups", "followups_operation_id_action_once_forever", "CREATE UNIQUE INDEX followups_operation_id_action_once_forever ON once.followups USING btree (operation_id, action)"},
	{"followups", "followups_pkey", "CREATE UNIQUE INDEX followups_pkey ON once.followups USING btree (id)"},
	{"guard_days", "guard_days_pkey", "CREATE UNIQUE INDEX guard_days_pkey ON once.guard_days USING btree (day, kind, name)"},
	{"latches", "latches_pkey", "CREATE UNIQUE INDEX latches_pkey ON once.latches USING btree (name, key)"},
	{"leases", "leases_pkey", "CREATE UNIQUE INDEX leases_pkey ON once.leases USING btree (name, key)"},
	{"ledger", "ledger_operation_id_kind_unit_once_forever", "CREATE UNIQUE INDEX ledger_operation_id_kind_unit_once_forever ON once.ledger USING btree (operation_id, kind, unit)"},
	{"ledger", "ledger_pkey", "CREATE UNIQUE INDEX ledger_pkey ON once.ledger USING btree (id)"},
	{"ledger", "ledger_scope_recorded_at", "CREATE INDEX ledger_scope_recorded_at ON once.ledger USING btree (scope, recorded_at)"},
	{"open_claims", "open_claims_name_key_once_open", "CREATE UNIQUE INDEX open_claims_name_key_once_open ON once.open_claims USING btree (name, key) WHERE (state = 'open'::text)"},
	{"open_claims", "open_claims_opened_at", "CREATE INDEX open_claims_opened_at ON once.open_claims USING brin (opened_at)"},
	{"open_claims", "open_claims_pkey", "CREATE UNIQUE INDEX open_claims_pkey ON once.open_claims USING btree (id)"},
	{"operations", "operations_claimed_at", "CREATE INDEX operations_claimed_at ON once.operations USING brin (claimed_at)"},
	{"operations", "operations_expires_at", "CREATE INDEX operations_expires_at ON once.operations USING btree (expires_at) WHERE (expires_at IS NOT NULL)"},
	{"operations", "operations_name_scope_key_once_forever", "CREATE UNIQUE INDEX operations_name_scope_key_once_forever ON once.operations USING btree (name, scope, key)"},
	{"operations", "operations_uncertain", "CREATE INDEX operations_uncertain ON once.operations USING btree (uncertain_since, id) WHERE (uncertain_since IS NOT NULL)"},
	{"rolled_days", "rolled_days_pkey", "CREATE UNIQUE INDEX rolled_days_pkey ON once.rolled_days USING btree (day)"},
	{"schema_steps", "schema_steps_pkey", "CREATE UNIQUE INDEX schema_steps_pkey ON once.schema_steps USING btree (step)"},
}

// runtimeTriggers are the triggers of the runtime's schema, as pg_get_triggerdef prints them:
// the runtime's statements rely on them as on a unique index (a Statement key's full mark is
// true only while every delete, update and truncation of its slots clears it).
var runtimeTriggers = []struct{ table, name, def string }{
	{"counter_slots", "counter_slots_given_back", "CREATE TRIGGER counter_slots_given_back AFTER DELETE ON once.counter_slots REFERENCING OLD TABLE AS gone FOR EACH STATEMENT EXECUTE FUNCTION once.counter_slots_given_back()"},
	{"counter_slots", "counter_slots_moved", "CREATE TRIGGER counter_slots_moved AFTER UPDATE ON once.counter_slots REFERENCING OLD TABLE AS gone FOR EACH STATEMENT EXECUTE FUNCTION once.counter_slots_given_back()"},
	{"counter_slots", "counter_slots_truncated", "CREATE TRIGGER counter_slots_truncated AFTER TRUNCATE ON once.counter_slots FOR EACH STATEMENT EXECUTE FUNCTION once.counter_slots_truncated()"},
}

var tableRE = regexp.MustCompile(`(?i)CREATE TABLE IF NOT EXISTS once\.(\w+)`)

// RuntimeRequirements returns what the runtime itself relies on: each table of its schema,
// each of its indexes and triggers in the form the schema creates it, and the schema step
// this runtime knows last (a database at an earlier step lacks something a statement of this
// runtime uses). Verify checks them in every program; oncegen verify checks them too.
//
// Columns are not listed: a column missing fails loudly at the first statement that uses it,
// while a missing or INVALID unique index fails silently, letting duplicates through.
func RuntimeRequirements() []Requirement {
	var out []Requirement
	for _, s := range steps {
		for _, m := range tableRE.FindAllStringSubmatch(s.Up, -1) {
			out = append(out, Requirement{Kind: TableObject, Table: "once." + strings.ToLower(m[1])})
		}
	}
	out = append(out, Requirement{Kind: StepObject, Table: "once.schema_steps", Name: "step", Def: strconv.Itoa(LatestStep())})
	for _, ix := range runtimeIndexes {
		out = append(out, Requirement{Kind: IndexObject, Table: "once." + ix.table, Name: ix.name, Def: ix.def})
	}
	for _, tg := range runtimeTriggers {
		out = append(out, Requirement{Kind: TriggerObject, Table: "once." + tg.table, Name: tg.name, Def: tg.def})
	}
	return out
}
