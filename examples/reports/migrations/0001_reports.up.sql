-- The application's own tables. The constraints its guards rely on, and once's own tables,
-- are in the migrations oncegen writes after this one.
CREATE TABLE accounts (
	id    text PRIMARY KEY,
	email text NOT NULL,
	-- token authenticates the account's API calls (Authorization: Bearer). The account an
	-- operation belongs to comes from here, never from a request's body.
	token text NOT NULL UNIQUE
);

CREATE TABLE submissions (
	id         bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	account_id text        NOT NULL REFERENCES accounts (id),
	title      text        NOT NULL,
	body       text        NOT NULL,
	created_at timestamptz NOT NULL DEFAULT clock_timestamp()
);

-- A job is one report to write: recorded by the request that asked for it, carried out by the
-- worker. operation_id is the front door's operation (once.operations) that recorded it: one
-- job per operation, by the unique index oncegen emits for insertJob.
CREATE TABLE report_jobs (
	id            bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	account_id    text        NOT NULL REFERENCES accounts (id),
	submission_id bigint      NOT NULL REFERENCES submissions (id),
	operation_id  uuid        NOT NULL,
	reference     text        NOT NULL,
	input         jsonb       NOT NULL,
	-- replaces is the report a deliberate Regenerate asked to replace.
	replaces      bigint      NULL,
	-- state mirrors the job's operation (reports.generate in once.operations) for the
	-- worker's queue: queued until it is done, failed or uncertain.
	state         text        NOT NULL DEFAULT 'queued' CHECK (state IN ('queued', 'done', 'failed', 'uncertain')),
	-- generation_id is the reports.generate operation (once.operations) carrying it out.
	generation_id uuid        NULL,
	report_id     bigint      NULL,
	error         text        NULL,
	created_at    timestamptz NOT NULL DEFAULT clock_timestamp()
);
CREATE INDEX report_jobs_queued ON report_jobs (id) WHERE state = 'queued';

-- One report per job, by the unique index oncegen emits for insertReport.
CREATE TABLE reports (
	id            bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	account_id    text        NOT NULL REFERENCES accounts (id),
	job_id        bigint      NOT NULL REFERENCES report_jobs (id),
	submission_id bigint      NOT NULL REFERENCES submissions (id),
	replaces      bigint      NULL REFERENCES reports (id),
	body          text        NOT NULL,
	model_call    text        NOT NULL,
	created_at    timestamptz NOT NULL DEFAULT clock_timestamp()
);
