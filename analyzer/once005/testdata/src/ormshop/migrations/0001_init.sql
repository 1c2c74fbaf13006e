-- +goose Up
CREATE TABLE users (
	id bigserial PRIMARY KEY,
	email text NOT NULL,
	name text
);
CREATE UNIQUE INDEX users_email_key ON users (lower(email));

CREATE TABLE invites (
	id bigserial PRIMARY KEY,
	team_id bigint NOT NULL,
	email text NOT NULL
);

-- +goose Down
DROP TABLE invites;
DROP TABLE users;
