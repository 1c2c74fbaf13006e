-- The editor's own tables. The unique indexes its promises rely on are not here: oncegen
-- derives them from the //once: directives and writes them in the migrations after this one.

-- A job is one video ad being edited, owned by an account.
CREATE TABLE jobs (
	id         bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	account_id text        NOT NULL,
	title      text        NOT NULL,
	created_at timestamptz NOT NULL DEFAULT now()
);

-- Render inputs are versioned snapshots, never edited in place: a paid action names the
-- version it was asked with, and every path that resumes it hydrates from that version.
-- voice_model_id and product_id may be empty in a draft; a paid action refuses such a
-- snapshot with a clear error instead of rendering with defaults.
CREATE TABLE render_inputs (
	job_id              bigint      NOT NULL REFERENCES jobs (id),
	version             integer     NOT NULL CHECK (version > 0),
	voice_model_id      text        NULL,
	product_id          text        NULL,
	reference_image_ids text[]      NOT NULL DEFAULT '{}',
	locked_at           timestamptz NULL,
	instruction         text        NOT NULL DEFAULT '',
	negative_prompt     text        NOT NULL DEFAULT '',
	created_at          timestamptz NOT NULL DEFAULT now(),
	PRIMARY KEY (job_id, version),
	CHECK ((product_id IS NULL) = (locked_at IS NULL))
);

-- Candidates are the takes of a job: the starter draft, and one per paid action that
-- succeeded (transaction_id names the action that produced it).
CREATE TABLE candidates (
	id              bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	job_id          bigint      NOT NULL REFERENCES jobs (id),
	transaction_id  uuid        NULL,
	kind            text        NOT NULL CHECK (kind IN ('draft', 'regenerated', 'promoted', 'render')),
	parent_id       bigint      NULL REFERENCES candidates (id),
	inputs_version  integer     NULL,
	provider_job_id text        NULL,
	created_at      timestamptz NOT NULL DEFAULT now(),
	CHECK ((kind = 'draft') = (transaction_id IS NULL))
);

-- A paid action is a transaction: the row is written before any spend, and its id owns
-- whatever the provider does for it. status: queued (claimed, waiting for a worker),
-- dispatching (a worker is calling the provider), unknown (the provider's answer was lost:
-- the recovery job asks again with the same key), succeeded, failed (nothing was billed).
CREATE TABLE paid_actions (
	transaction_id      uuid        PRIMARY KEY DEFAULT gen_random_uuid(),
	account_id          text        NOT NULL,
	action_key          text        NOT NULL,
	job_id              bigint      NOT NULL REFERENCES jobs (id),
	action              text        NOT NULL CHECK (action IN ('regenerate', 'promote', 'render')),
	candidate_id        bigint      NOT NULL REFERENCES candidates (id),
	inputs_version      integer     NOT NULL,
	instruction         text        NOT NULL DEFAULT '',
	status              text        NOT NULL DEFAULT 'queued'
		CHECK (status IN ('queued', 'dispatching', 'unknown', 'succeeded', 'failed')),
	provider_requests   integer     NOT NULL DEFAULT 0,
	result_candidate_id bigint      NULL REFERENCES candidates (id),
	provider_job_id     text        NULL,
	error               text        NULL,
	created_at          timestamptz NOT NULL DEFAULT now(),
	dispatched_at       timestamptz NULL,
	settled_at          timestamptz NULL,
	FOREIGN KEY (job_id, inputs_version) REFERENCES render_inputs (job_id, version)
);
CREATE INDEX paid_actions_pending ON paid_actions (created_at)
	WHERE status IN ('queued', 'dispatching', 'unknown');

-- The cost ledger answers, for each user-visible action: which transaction owns the spend,
-- what it cost, which provider job became the surfaced result, and how many requests the
-- provider saw for it. One entry per transaction (oncegen's unique index).
CREATE TABLE cost_ledger (
	id                bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	transaction_id    uuid        NOT NULL REFERENCES paid_actions (transaction_id),
	account_id        text        NOT NULL,
	provider          text        NOT NULL,
	amount_usd_micros bigint      NOT NULL CHECK (amount_usd_micros >= 0),
	provider_job_id   text        NOT NULL,
	provider_requests integer     NOT NULL,
	recorded_at       timestamptz NOT NULL DEFAULT now()
);
