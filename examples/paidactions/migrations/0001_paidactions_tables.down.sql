DROP TABLE cost_ledger;
DROP TABLE paid_actions;
DROP TABLE candidates;
DROP TABLE render_inputs;
DROP TABLE jobs;
