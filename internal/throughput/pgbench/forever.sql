-- A Forever guard's fresh key: the claim (as in claim.sql), then the settle
-- (foreverSettleSQL), each its own transaction, as Forever.Do sends them.
\set k random(1, 1000000000000)
INSERT INTO once.operations (name, scope, key, token, fingerprint) VALUES ('g', '', 'k' || :k, '0123456789abcdef0123456789abcdef', NULL)
ON CONFLICT (name, scope, key) DO NOTHING RETURNING id AS id, provider_ref::text AS ref
\gset
UPDATE once.operations SET state = 'done', result = '{"charge_id":"ch_1","amount":500}', error = NULL,
	settled_at = t.now, alive_at = t.now, retain = NULL::bigint * interval '1 microsecond',
	expires_at = CASE WHEN 'done' <> 'uncertain' THEN t.now + NULL::bigint * interval '1 microsecond' END,
	uncertain_since = CASE WHEN 'done' = 'uncertain' THEN coalesce(uncertain_since, t.now) END
FROM (SELECT clock_timestamp() AS now) t
WHERE id = :id AND token = '0123456789abcdef0123456789abcdef' AND state IN ('open', 'uncertain');
