-- Two floor inserts with two commits: what Forever's fresh key is measured against.
\set k random(1, 1000000000000)
INSERT INTO floor (key) VALUES ('k' || :k) ON CONFLICT DO NOTHING;
INSERT INTO floor (key) VALUES ('j' || :k) ON CONFLICT DO NOTHING;
