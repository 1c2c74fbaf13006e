-- The naive app's tables: the outreach app's, without the constraints its promises add.

CREATE TABLE users (
    id         bigserial PRIMARY KEY,
    email      text NOT NULL,
    name       text NOT NULL,
    api_token  text NOT NULL UNIQUE
);

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

CREATE TABLE outreach_threads (
    id           bigserial PRIMARY KEY,
    campaign_id  bigint NOT NULL REFERENCES campaigns (id),
    creator_id   bigint NOT NULL REFERENCES creators (id),
    user_id      bigint NOT NULL REFERENCES users (id),
    token        text NOT NULL UNIQUE,
    created_at   timestamptz NOT NULL
);

CREATE TABLE inbound_emails (
    id                   bigserial PRIMARY KEY,
    provider_message_id  text NOT NULL,
    thread_id            bigint REFERENCES outreach_threads (id),
    sender               text NOT NULL,
    body                 text NOT NULL,
    received_at          timestamptz NOT NULL
);

CREATE TABLE jobs (
    id          bigserial PRIMARY KEY,
    kind        text NOT NULL,
    dedupe_key  text NOT NULL,
    payload     jsonb NOT NULL,
    status      text NOT NULL DEFAULT 'pending',
    attempts    int NOT NULL DEFAULT 0,
    run_after   timestamptz NOT NULL,
    last_error  text
);

CREATE TABLE provider_days (
    provider       text NOT NULL,
    day            date NOT NULL,
    requests_used  bigint NOT NULL DEFAULT 0,
    PRIMARY KEY (provider, day)
);

-- The per-day guard of the "source blocked" alert.
CREATE TABLE alert_days (
    provider  text NOT NULL,
    day       date NOT NULL,
    PRIMARY KEY (provider, day)
);
