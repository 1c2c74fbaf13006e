-- The naive app's tables: the same as the real app's, without the indexes its promises
-- rely on (one open run per organisation, one job per run).
CREATE TABLE IF NOT EXISTS organisations (
	id   bigint PRIMARY KEY,
	name text   NOT NULL
);

CREATE TABLE IF NOT EXISTS runs (
	id          bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	org_id      bigint      NOT NULL REFERENCES organisations (id),
	status      text        NOT NULL DEFAULT 'queued',
	created_at  timestamptz NOT NULL DEFAULT now(),
	finished_at timestamptz NULL
);

CREATE TABLE IF NOT EXISTS jobs (
	id       bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	run_id   bigint NOT NULL REFERENCES runs (id),
	state    text   NOT NULL DEFAULT 'queued',
	attempts int    NOT NULL DEFAULT 0
);

CREATE TABLE IF NOT EXISTS ideas (
	id     bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	run_id bigint NOT NULL REFERENCES runs (id),
	title  text   NOT NULL
);
