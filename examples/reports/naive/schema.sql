CREATE TABLE accounts (
	id    text PRIMARY KEY,
	email text NOT NULL,
	token text NOT NULL UNIQUE
);
CREATE TABLE submissions (
	id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	account_id text   NOT NULL REFERENCES accounts (id),
	title      text   NOT NULL,
	body       text   NOT NULL
);
-- No constraint on reference: the request's SELECT is the only check.
CREATE TABLE report_jobs (
	id            bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	account_id    text   NOT NULL REFERENCES accounts (id),
	submission_id bigint NOT NULL REFERENCES submissions (id),
	reference     text   NOT NULL,
	input         jsonb  NOT NULL,
	state         text   NOT NULL DEFAULT 'queued'
);
CREATE TABLE reports (
	id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	account_id text   NOT NULL REFERENCES accounts (id),
	job_id     bigint NOT NULL REFERENCES report_jobs (id),
	body       text   NOT NULL,
	model_call text   NOT NULL
);
-- One row per report made, written by whichever worker made it.
CREATE TABLE usage (
	account_id text   NOT NULL REFERENCES accounts (id),
	report_id  bigint NOT NULL REFERENCES reports (id),
	units      int    NOT NULL
);
