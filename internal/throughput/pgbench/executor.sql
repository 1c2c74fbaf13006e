-- What the server's executor spends on a Forever guard's fresh key, against the floor's
-- insert made twice, with no client, no network and no commit in the measure: each function
-- runs its statements n times inside one call (plpgsql keeps their plans, as a prepared
-- statement does) and returns the backend's own CPU time per iteration, in microseconds, read
-- from /proc/self/stat (Linux; a superuser's session). Run on a database holding once's schema
-- (and nothing else named once_exec_*):
--
--   psql -d DB -f internal/throughput/pgbench/executor.sql
--
-- Each function is called five times in turn; the minimum of each is what to read (a loaded
-- machine only adds).
\set QUIET on
CREATE TABLE IF NOT EXISTS once_exec_floor (key text PRIMARY KEY);
CREATE OR REPLACE FUNCTION once_exec_cpu() RETURNS bigint LANGUAGE sql AS $$
	SELECT f[12]::bigint + f[13]::bigint
	FROM (SELECT string_to_array(split_part(pg_read_file('/proc/self/stat'), ') ', 2), ' ') AS f) s
$$;
CREATE OR REPLACE FUNCTION once_exec_floor_pair(n int) RETURNS numeric LANGUAGE plpgsql AS $f$
DECLARE t0 bigint; k text; base text := md5(random()::text);
BEGIN
	t0 := once_exec_cpu();
	FOR i IN 1..n LOOP
		k := base || i;
		INSERT INTO once_exec_floor (key) VALUES (k) ON CONFLICT DO NOTHING;
		INSERT INTO once_exec_floor (key) VALUES (k || '/settled') ON CONFLICT DO NOTHING;
	END LOOP;
	RETURN round((once_exec_cpu() - t0) * 1e6 / current_setting('once_exec.hz')::numeric / n, 1);
END $f$;
CREATE OR REPLACE FUNCTION once_exec_claim(n int) RETURNS numeric LANGUAGE plpgsql AS $f$
DECLARE t0 bigint; k text; base text := md5(random()::text);
BEGIN
	t0 := once_exec_cpu();
	FOR i IN 1..n LOOP
		k := base || i;
		INSERT INTO once.operations (name, scope, key, id, token)
		VALUES ('exec.claim', '', k, '6a1f7d3c-1111-4222-8333-444455556666', '0123456789abcdef0123456789abcdef')
		ON CONFLICT (name, scope, key) DO NOTHING;
	END LOOP;
	RETURN round((once_exec_cpu() - t0) * 1e6 / current_setting('once_exec.hz')::numeric / n, 1);
END $f$;
CREATE OR REPLACE FUNCTION once_exec_claim_settle(n int) RETURNS numeric LANGUAGE plpgsql AS $f$
DECLARE t0 bigint; k text; base text := md5(random()::text);
BEGIN
	t0 := once_exec_cpu();
	FOR i IN 1..n LOOP
		k := base || i;
		INSERT INTO once.operations (name, scope, key, id, token)
		VALUES ('exec.forever', '', k, '6a1f7d3c-1111-4222-8333-444455556666', '0123456789abcdef0123456789abcdef')
		ON CONFLICT (name, scope, key) DO NOTHING;
		UPDATE once.operations SET state = 'done', result = '1', error = NULL,
			settled_at = statement_timestamp(), expires_at = statement_timestamp() + retain, uncertain_since = NULL
		WHERE name = 'exec.forever' AND scope = '' AND key = k AND token = '0123456789abcdef0123456789abcdef' AND state IN ('open', 'uncertain');
	END LOOP;
	RETURN round((once_exec_cpu() - t0) * 1e6 / current_setting('once_exec.hz')::numeric / n, 1);
END $f$;
-- The kernel counts CPU time in ticks of 1/100 s on Linux (USER_HZ).
SET once_exec.hz = 100;
\set QUIET off
SELECT round, once_exec_floor_pair(20000) AS floor_pair_us, once_exec_claim(20000) AS claim_us, once_exec_claim_settle(20000) AS claim_settle_us
FROM generate_series(1, 5) AS round;
DELETE FROM once.operations WHERE name IN ('exec.claim', 'exec.forever');
DROP TABLE once_exec_floor;
DROP FUNCTION once_exec_floor_pair(int), once_exec_claim(int), once_exec_claim_settle(int), once_exec_cpu();
