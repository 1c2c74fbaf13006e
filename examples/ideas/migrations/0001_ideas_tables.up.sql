-- The ideas app's own tables. The constraints its promises rely on (the one open run per
-- organisation, the one job per run) are in the migrations oncegen writes after this one.
CREATE TABLE organisations (
	id   bigint PRIMARY KEY,
	name text   NOT NULL
);

-- A run is one paid generation. queued, researching and ideating are open (in flight);
-- completed, failed and stale are endings. reset_at is set by support to give the month's
-- allowance back without deleting anything.
CREATE TABLE runs (
	id          bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	org_id      bigint      NOT NULL REFERENCES organisations (id),
	status      text        NOT NULL DEFAULT 'queued'
		CHECK (status IN ('queued', 'researching', 'ideating', 'completed', 'failed', 'stale')),
	created_at  timestamptz NOT NULL DEFAULT now(),
	finished_at timestamptz NULL,
	findings    text        NULL,
	failure     text        NULL,
	reset_at    timestamptz NULL,
	CHECK ((status IN ('queued', 'researching', 'ideating')) = (finished_at IS NULL))
);
CREATE INDEX runs_org_id_created_at ON runs (org_id, created_at);

-- The worker's queue: one job per run. A running job whose locked_until has passed lost its
-- worker and is taken over.
CREATE TABLE jobs (
	id           bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	run_id       bigint      NOT NULL REFERENCES runs (id),
	state        text        NOT NULL DEFAULT 'queued' CHECK (state IN ('queued', 'running', 'done', 'failed')),
	attempts     int         NOT NULL DEFAULT 0,
	available_at timestamptz NOT NULL DEFAULT now(),
	locked_until timestamptz NULL,
	last_error   text        NULL
);
CREATE INDEX jobs_due ON jobs (available_at) WHERE state IN ('queued', 'running');

CREATE TABLE ideas (
	id       bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	run_id   bigint NOT NULL REFERENCES runs (id),
	position int    NOT NULL,
	title    text   NOT NULL,
	status   text   NOT NULL DEFAULT 'new' CHECK (status IN ('new', 'refined', 'dismissed')),
	revision int    NOT NULL DEFAULT 0,
	UNIQUE (run_id, position)
);
