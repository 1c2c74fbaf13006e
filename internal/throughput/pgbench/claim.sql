-- A Forever guard's claim of a fresh key (foreverClaimPlainSQL): the process draws the
-- operation's id and token, and nothing is returned.
\set k random(1, 1000000000000)
INSERT INTO once.operations (name, scope, key, id, token)
VALUES ('g', '', 'k' || :k, gen_random_uuid(), '0123456789abcdef0123456789abcdef')
ON CONFLICT (name, scope, key) DO NOTHING;
