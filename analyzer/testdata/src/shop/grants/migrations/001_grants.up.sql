CREATE TABLE storage_grants (
    grant_id   text PRIMARY KEY,
    user_id    bigint NOT NULL,
    storage    bigint NOT NULL
);

CREATE TABLE grant_log (
    user_id    bigint NOT NULL,
    note       text NOT NULL
);
