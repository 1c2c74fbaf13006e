-- The bare floor (a): one fresh key into a table of one column and one index.
\set k random(1, 1000000000000)
INSERT INTO floor (key) VALUES ('k' || :k) ON CONFLICT DO NOTHING;
