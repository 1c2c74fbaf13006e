-- The app's tables. Only subscribers and handles declare a unique constraint on what
-- the code looks up; the rest are checked in code, which is what the tests are about.
CREATE TABLE invites (id bigserial PRIMARY KEY, team_id bigint NOT NULL, email text NOT NULL);
CREATE TABLE follows (id bigserial PRIMARY KEY, user_id bigint NOT NULL, target_id bigint NOT NULL);
CREATE TABLE stars (id bigserial PRIMARY KEY, user_id bigint NOT NULL, repo_id bigint NOT NULL);
CREATE TABLE item_tags (item_id bigint NOT NULL, tag text NOT NULL);
CREATE TABLE subscribers (
	id    bigserial PRIMARY KEY,
	email text NOT NULL,
	CONSTRAINT subscribers_email_key UNIQUE (email)
);
CREATE TABLE handles (id bigserial PRIMARY KEY, user_id bigint NOT NULL);
ALTER TABLE handles ADD COLUMN name text UNIQUE;
