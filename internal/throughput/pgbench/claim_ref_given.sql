-- The claim with the provider reference drawn by the caller instead of gen_random_uuid(),
-- and only the id returned: foreverClaimSQL as the runtime sends it now.
\set k random(1, 1000000000000)
INSERT INTO once.operations (name, scope, key, token, fingerprint, provider_ref) VALUES ('g', '', 'k' || :k, '0123456789abcdef0123456789abcdef', NULL, '6f1c2b0e-4c1d-4a8e-9b1a-2f3e4d5c6b7a')
ON CONFLICT (name, scope, key) DO NOTHING RETURNING id;
