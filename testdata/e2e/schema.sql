-- The storm app's own tables, before oncegen's migrations add what its guards rely on.
CREATE TABLE effects (kind text NOT NULL, key text NOT NULL, at timestamptz NOT NULL DEFAULT clock_timestamp());
CREATE TABLE decisions (org text NOT NULL, approved boolean NOT NULL);
CREATE TABLE jobs (id bigserial PRIMARY KEY, dedupe_key text NOT NULL, status text NOT NULL);
CREATE SCHEMA billing;
CREATE TABLE billing.charges (org_id bigint, day text);
CREATE TABLE alerts (rule_id text NOT NULL);
CREATE TABLE quota (org_id bigint NOT NULL, day text NOT NULL);
