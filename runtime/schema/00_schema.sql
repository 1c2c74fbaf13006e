-- once's own tables live in their own schema, so an operator finds every promise's state in
-- one place: \dt once.*
CREATE SCHEMA IF NOT EXISTS once;
