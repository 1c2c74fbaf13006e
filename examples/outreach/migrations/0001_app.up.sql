-- The outreach app's own tables. The constraints its //once: guards rely on (unique
-- indexes, the latch and counter columns) are added by the migrations oncegen writes after
-- this one, from the directives in the code.

CREATE TABLE users (
    id         bigserial PRIMARY KEY,
    email      text NOT NULL,
    name       text NOT NULL,
    api_token  text NOT NULL UNIQUE
);

-- One subscription row per user and per billing customer. updated_at is the billing
-- provider's version of the state, copied from it: a plan change's idempotency key
-- includes it.
CREATE TABLE subscriptions (
    user_id      bigint PRIMARY KEY REFERENCES users (id),
    customer_id  text NOT NULL UNIQUE,
    plan         text NOT NULL,
    status       text NOT NULL,
    updated_at   timestamptz NOT NULL
);

CREATE TABLE creators (
    id     bigserial PRIMARY KEY,
    name   text NOT NULL,
    email  text NOT NULL UNIQUE
);

CREATE TABLE campaigns (
    id       bigserial PRIMARY KEY,
    user_id  bigint NOT NULL REFERENCES users (id),
    name     text NOT NULL,
    pitch    text NOT NULL
);

-- A conversation. The token is the creator's link (/o/TOKEN) and the local part of its
-- reply address, so it is unique; one conversation per creator per campaign is declared
-- on InsertThread.
CREATE TABLE outreach_threads (
    id           bigserial PRIMARY KEY,
    campaign_id  bigint NOT NULL REFERENCES campaigns (id),
    creator_id   bigint NOT NULL REFERENCES creators (id),
    user_id      bigint NOT NULL REFERENCES users (id),
    token        text NOT NULL UNIQUE,
    created_at   timestamptz NOT NULL
);
CREATE INDEX outreach_threads_user_created ON outreach_threads (user_id, created_at);

-- One row per outreach email the provider accepted.
CREATE TABLE outreach_emails (
    thread_id    bigint PRIMARY KEY REFERENCES outreach_threads (id),
    provider_id  text NOT NULL,
    sent_at      timestamptz NOT NULL
);

-- Messages the email provider delivered to a conversation's reply address; one per
-- provider message id, declared on RecordInbound.
CREATE TABLE inbound_emails (
    id                   bigserial PRIMARY KEY,
    provider_message_id  text NOT NULL,
    thread_id            bigint REFERENCES outreach_threads (id),
    sender               text NOT NULL,
    body                 text NOT NULL,
    received_at          timestamptz NOT NULL
);

-- Addresses that asked not to be written to, by the hash of the address; one row per
-- address, declared on Suppress.
CREATE TABLE suppressions (
    address_hash  text NOT NULL,
    created_at    timestamptz NOT NULL
);

-- The job queue. A dedupe_key is unique among pending and running jobs only (declared on
-- EnqueueJob): the same work can be queued again once it has finished.
CREATE TABLE jobs (
    id          bigserial PRIMARY KEY,
    kind        text NOT NULL,
    dedupe_key  text NOT NULL,
    payload     jsonb NOT NULL,
    status      text NOT NULL DEFAULT 'pending'
                CHECK (status IN ('pending', 'running', 'done', 'failed')),
    attempts    int NOT NULL DEFAULT 0,
    run_after   timestamptz NOT NULL,
    last_error  text,
    created_at  timestamptz NOT NULL DEFAULT now(),
    updated_at  timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX jobs_pending_run_after ON jobs (run_after) WHERE status = 'pending';

-- What the paid data source was asked per day: the counter column and its unique index
-- are declared on UseSource.
CREATE TABLE provider_days (
    provider  text NOT NULL,
    day       date NOT NULL
);

-- Per source, the latch of its "blocked" alert, declared on FireBlockedAlert.
CREATE TABLE provider_state (
    provider  text NOT NULL
);

-- What each import job brought back from the paid source.
CREATE TABLE imports (
    job_id       bigint PRIMARY KEY REFERENCES jobs (id),
    city         text NOT NULL,
    source_ref   text NOT NULL,
    imported_at  timestamptz NOT NULL
);
