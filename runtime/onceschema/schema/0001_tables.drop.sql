-- Drops once's tables and every row in them: what was promised, billed, owed and audited is
-- lost. Written only when the user asks for it by name (oncegen -down-drops-once-tables).
-- squawk-ignore-file ban-drop-table
DROP TABLE IF EXISTS once.audit;
DROP TABLE IF EXISTS once.duplicate_days;
DROP TABLE IF EXISTS once.rolled_days;
DROP TABLE IF EXISTS once.guard_days;
DROP TABLE IF EXISTS once.leases;
DROP TABLE IF EXISTS once.counter_full;
DROP TABLE IF EXISTS once.counter_slots;
DROP FUNCTION IF EXISTS once.counter_slots_given_back();
DROP FUNCTION IF EXISTS once.counter_slots_truncated();
DROP TABLE IF EXISTS once.latches;
DROP TABLE IF EXISTS once.open_claims;
DROP TABLE IF EXISTS once.followups;
DROP TABLE IF EXISTS once.ledger;
DROP TABLE IF EXISTS once.checkpoints;
DROP TABLE IF EXISTS once.operations;
DROP TYPE IF EXISTS once.operation_state;
DROP DOMAIN IF EXISTS once.result_form;
DROP TABLE IF EXISTS once.schema_steps;
DROP SCHEMA IF EXISTS once;
