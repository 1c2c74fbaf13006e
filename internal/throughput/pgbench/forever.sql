-- A Forever guard's fresh key: the claim (as in claim.sql), then the settle
-- (foreverSettleResultSQL), each its own transaction, as Forever.Do sends them.
\set k random(1, 1000000000000)
INSERT INTO once.operations (name, scope, key, id, token)
VALUES ('g', '', 'k' || :k, gen_random_uuid(), '0123456789abcdef0123456789abcdef')
ON CONFLICT (name, scope, key) DO NOTHING;
UPDATE once.operations SET state = 'done', result = '{"charge_id":"ch_1","amount":500}', error = NULL,
	settled_at = statement_timestamp(), expires_at = statement_timestamp() + retain, uncertain_since = NULL
WHERE name = 'g' AND scope = '' AND key = 'k' || :k AND token = '0123456789abcdef0123456789abcdef' AND state IN ('open', 'uncertain');
