-- A Forever guard's claim of a fresh key, with the provider reference drawn by the column's
-- default and returned, as the runtime sent it before it drew the reference itself.
\set k random(1, 1000000000000)
INSERT INTO once.operations (name, scope, key, token, fingerprint) VALUES ('g', '', 'k' || :k, '0123456789abcdef0123456789abcdef', NULL)
ON CONFLICT (name, scope, key) DO NOTHING RETURNING id, provider_ref::text;
