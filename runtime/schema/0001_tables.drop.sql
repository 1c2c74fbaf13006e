-- Drops once's tables and every row in them: what was promised, billed and owed is lost.
DROP TABLE IF EXISTS once.followups;
DROP TABLE IF EXISTS once.ledger;
DROP TABLE IF EXISTS once.checkpoints;
DROP TABLE IF EXISTS once.operations;
DROP TABLE IF EXISTS once.leases;
DROP TABLE IF EXISTS once.open_claims;
DROP TABLE IF EXISTS once.latches;
DROP TABLE IF EXISTS once.counters;
DROP TABLE IF EXISTS once.schema_steps;
DROP SCHEMA IF EXISTS once;
