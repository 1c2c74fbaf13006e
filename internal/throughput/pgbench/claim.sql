-- A Forever guard's claim of a fresh key, as the runtime sends it (foreverClaimSQL).
\set k random(1, 1000000000000)
INSERT INTO once.operations (name, scope, key, token, fingerprint) VALUES ('g', '', 'k' || :k, '0123456789abcdef0123456789abcdef', NULL)
ON CONFLICT (name, scope, key) DO NOTHING RETURNING id, provider_ref::text;
