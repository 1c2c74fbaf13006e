DROP TABLE reports;
DROP TABLE report_jobs;
DROP TABLE submissions;
DROP TABLE accounts;
