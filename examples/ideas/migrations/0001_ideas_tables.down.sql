DROP TABLE ideas;
DROP TABLE jobs;
DROP TABLE runs;
DROP TABLE organisations;
