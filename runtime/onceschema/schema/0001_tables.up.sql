-- once's own tables live in their own schema, so an operator finds every promise's state in
-- one place: \dt once.*
--
-- Every statement here may run again on a database that holds it already (IF NOT EXISTS, or
-- a DO block that looks first): the step is applied by once's own migration (onceschema.Migrate)
-- or by the file oncegen wrote, and either may follow the other, or follow this step's down,
-- which keeps the tables and their rows.
CREATE SCHEMA IF NOT EXISTS once;

-- The steps of this schema applied to the database: each step is applied once, and records
-- itself here in the transaction that applies it.
CREATE TABLE IF NOT EXISTS once.schema_steps (
	step       bigint      PRIMARY KEY,
	name       text        NOT NULL,
	applied_at timestamptz NOT NULL DEFAULT clock_timestamp()
);
COMMENT ON TABLE once.schema_steps IS 'once schema steps applied to this database, one row per step: onceschema.Migrate applies the missing ones, once.Verify requires the newest its runtime knows.';

-- forever: once for ever (or for a retention window). One row per guard name, scope and key:
-- the row is the promise, and the insert that makes it is the claim. Its primary key is the
-- only index a claim writes; the columns a settle changes come last, so that a settle, which
-- stays on its page (fillfactor) and changes no indexed column, is logged as little more than
-- those columns.
DO $$
BEGIN
	CREATE TYPE once.operation_state AS ENUM ('open', 'done', 'failed', 'released', 'uncertain');
EXCEPTION WHEN duplicate_object THEN
	NULL; -- an earlier up made it; the down keeps it with the table that uses it
END
$$;
COMMENT ON TYPE once.operation_state IS 'where a forever operation stands: open (an attempt holds the claim), done, failed (terminal), released (the next call runs again), uncertain (awaiting an operator).';
-- The forms a recorded result may be kept in. A domain, not a CHECK on the table: PostgreSQL
-- reads and plans a table's CHECK again at every insert and update (about a fifth of the
-- executor's work in a claim and its settle), a domain's once per session. That none holds
-- no result and the other forms hold theirs is the runtime's to keep: a row edited by hand
-- against it replays as its form says, with no value for none or for a form without one.
DO $$
BEGIN
	CREATE DOMAIN once.result_form AS text CONSTRAINT operations_result_form CHECK (VALUE IN ('sealed', 'digest', 'none'));
EXCEPTION WHEN duplicate_object THEN
	NULL; -- an earlier up made it; the down keeps it with the table that uses it
END
$$;
COMMENT ON DOMAIN once.result_form IS 'how a forever operation''s result is kept at rest: sealed, digest or none (NULL: the value itself).';
CREATE TABLE IF NOT EXISTS once.operations (
	name            text        NOT NULL,
	scope           text        NOT NULL,
	key             text        NOT NULL,
	id              uuid        NOT NULL,
	token           text        NOT NULL,
	attempts        bigint      NOT NULL DEFAULT 1,
	fingerprint     bytea       NULL,
	retain          interval    NULL,
	claimed_at      timestamptz NOT NULL DEFAULT statement_timestamp(),
	alive_at        timestamptz NOT NULL DEFAULT statement_timestamp(),
	recovery_point  text        NULL,
	settled_at      timestamptz NULL,
	expires_at      timestamptz NULL,
	uncertain_since timestamptz NULL,
	error           text        NULL,
	result          json        NULL,
	result_form     once.result_form NULL,
	state           once.operation_state NOT NULL DEFAULT 'open',
	CONSTRAINT operations_name_scope_key_once_forever PRIMARY KEY (name, scope, key)
) WITH (fillfactor = 80);
-- Both indexes cover only the rows they serve, and read no column an open-to-done settle
-- changes: a guard that keeps its outcomes for ever settles without an index entry.
CREATE INDEX IF NOT EXISTS operations_expires_at ON once.operations (expires_at) WHERE expires_at IS NOT NULL;
CREATE INDEX IF NOT EXISTS operations_uncertain ON once.operations (uncertain_since, id) WHERE uncertain_since IS NOT NULL;
-- The operator console's overview counts a window of claims: a block range index keeps it to
-- the window's pages (claims come in time order) and costs a claim nothing, since a new
-- page's range is summarized by a later vacuum, not by the insert.
CREATE INDEX IF NOT EXISTS operations_claimed_at ON once.operations USING brin (claimed_at);
COMMENT ON TABLE once.operations IS 'once forever guards: one row per guard name, scope (tenant or account) and key. The insert is the claim; state says where the promise stands.';
COMMENT ON COLUMN once.operations.scope IS 'tenant or account the key belongs to ('''' for none): the same key in two scopes is two operations.';
COMMENT ON COLUMN once.operations.id IS 'the operation''s id: drawn at random when the key is first claimed, the same for every attempt, new for a key claimed again after its retention. Provider keys, checkpoints, ledger entries and follow-ups are derived from it or refer to it.';
COMMENT ON COLUMN once.operations.token IS 'proof of the current attempt: a settle, a heartbeat and a checkpoint are conditional on it, so a late or replaced holder changes nothing.';
COMMENT ON COLUMN once.operations.fingerprint IS 'sha256 of the canonical JSON of the input the key was first used with; a reuse with another input is refused.';
COMMENT ON COLUMN once.operations.retain IS 'how long the guard keeps a settled outcome (NULL = for ever), recorded at the claim, so that an operator''s resolution is kept as long as the guard would have kept it.';
COMMENT ON COLUMN once.operations.alive_at IS 'the last sign of life of the attempt holding an open claim (its claim, a checkpoint, a heartbeat): past the guard''s stale window, its holder is taken to be dead.';
COMMENT ON COLUMN once.operations.expires_at IS 'when a settled outcome is forgotten (NULL = kept for ever); after it a retry runs as new work, and the reaper deletes the row.';
COMMENT ON COLUMN once.operations.uncertain_since IS 'when the operation became uncertain (NULL unless it is): the order in which an operator reconciles them.';
COMMENT ON COLUMN once.operations.result IS 'what a done operation returned, as JSON, in the form result_form names; NULL when nothing was recorded (error then says why, if the function returned a value).';
COMMENT ON COLUMN once.operations.result_form IS 'how result is kept at rest (Forever.Record and Forever.Seal): NULL = the value itself, as JSON; sealed = a JSON string of the base64 of what the guard''s Sealer made of the value (never the value in the clear); digest = a JSON string of the hex SHA-256 of the value''s canonical JSON; none = nothing recorded, by the guard''s choice.';
COMMENT ON COLUMN once.operations.state IS 'open = an attempt holds the claim (alive_at says when it last showed life); done = the effect happened, result holds what it returned; failed = a terminal failure, error is replayed to every retry; released = the last attempt failed in a way that is safe to retry, the next call runs again; uncertain = the effect may or may not have happened (its holder died, or its result was lost): never retried until an operator resolves it.';

-- Recovery points: each records that a step of an operation is done, with what it produced,
-- written in the step's own transaction. A retry resumes after the last one. Deleted with
-- their operation by the runtime (an operation's id is drawn, not a key another table can
-- refer to).
CREATE TABLE IF NOT EXISTS once.checkpoints (
	operation_id uuid        NOT NULL,
	step         text        NOT NULL,
	attempt      bigint      NOT NULL,
	recorded_at  timestamptz NOT NULL DEFAULT clock_timestamp(),
	state        json        NULL,
	PRIMARY KEY (operation_id, step)
);
COMMENT ON TABLE once.checkpoints IS 'once recovery points: a step of an operation that is done (committed with the step''s own writes), with its state; a retry of the operation skips it.';

-- The ledger outlives the operations it counts: reaping an expired operation never deletes
-- what was billed for it.
CREATE TABLE IF NOT EXISTS once.ledger (
	id           bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	operation_id uuid        NOT NULL,
	operation    text        NOT NULL,
	scope        text        NOT NULL,
	key          text        NOT NULL,
	kind         text        NOT NULL,
	unit         text        NOT NULL,
	quantity     bigint      NOT NULL,
	detail       json        NULL,
	recorded_at  timestamptz NOT NULL DEFAULT clock_timestamp(),
	CONSTRAINT ledger_operation_id_kind_unit_once_forever UNIQUE (operation_id, kind, unit)
);
CREATE INDEX IF NOT EXISTS ledger_scope_recorded_at ON once.ledger (scope, recorded_at);
COMMENT ON TABLE once.ledger IS 'once ledger: usage and cost entries, each written in the transaction that settles its operation and unique per operation, kind and unit, so no retry, worker or recovery adds a second.';

-- Follow-ups: actions enqueued when an operation settles, delivered at least once by a drain.
CREATE TABLE IF NOT EXISTS once.followups (
	id           bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	operation_id uuid        NOT NULL,
	operation    text        NOT NULL,
	scope        text        NOT NULL,
	key          text        NOT NULL,
	action       text        NOT NULL,
	payload      json        NULL,
	provider_key text        NOT NULL,
	state        text        NOT NULL DEFAULT 'pending',
	attempts     bigint      NOT NULL DEFAULT 0,
	last_error   text        NULL,
	created_at   timestamptz NOT NULL DEFAULT clock_timestamp(),
	due_at       timestamptz NOT NULL DEFAULT clock_timestamp(),
	delivered_at timestamptz NULL,
	CONSTRAINT followups_state CHECK (state IN ('pending', 'delivered', 'dead')),
	CONSTRAINT followups_operation_id_action_once_forever UNIQUE (operation_id, action)
);
CREATE INDEX IF NOT EXISTS followups_due ON once.followups (due_at) WHERE state = 'pending';
-- The dead ones, for an operator: few, and state is already read by followups_due.
CREATE INDEX IF NOT EXISTS followups_dead ON once.followups (id) WHERE state = 'dead';
COMMENT ON TABLE once.followups IS 'once follow-ups: actions (email the owner, export) enqueued in the transaction that settles an operation. pending = to deliver at due_at (attempts so far, last_error); delivered; dead = gave up after the drain''s attempt limit, for an operator.';

-- open: once while the work is open. At most one row per guard and key is open, by the
-- partial unique index; closed rows stay as history.
CREATE TABLE IF NOT EXISTS once.open_claims (
	id          bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	name        text        NOT NULL,
	key         text        NOT NULL,
	state       text        NOT NULL DEFAULT 'open' CHECK (state IN ('open', 'done', 'failed', 'stale')),
	token       text        NOT NULL,
	stale_after interval    NOT NULL,
	opened_at   timestamptz NOT NULL DEFAULT clock_timestamp(),
	alive_at    timestamptz NOT NULL DEFAULT clock_timestamp(),
	closed_at   timestamptz NULL,
	reason      text        NULL,
	CHECK ((state = 'open') = (closed_at IS NULL))
);
-- Every ON CONFLICT against it repeats this predicate as a literal, text-identical.
CREATE UNIQUE INDEX IF NOT EXISTS open_claims_name_key_once_open ON once.open_claims (name, key) WHERE state = 'open';
-- The operator console's overview counts a window of claims: a block range index keeps the
-- days not yet rolled up (once.guard_days) to their pages, and costs a claim nothing.
CREATE INDEX IF NOT EXISTS open_claims_opened_at ON once.open_claims USING brin (opened_at);
COMMENT ON TABLE once.open_claims IS 'once open guards: one row per claim. state open = work in progress (at most one per name and key); done, failed (reason says why) or stale (closed by a later claim or a sweep once it showed no life for stale_after). token is the owner''s proof.';
COMMENT ON COLUMN once.open_claims.stale_after IS 'how long the claim may show no life before a later claim (or a sweep) closes it as stale: the window of the guard that made it.';
COMMENT ON COLUMN once.open_claims.alive_at IS 'the claim''s last sign of life (its opening, or its holder''s last heartbeat).';

-- episode: once per episode. fired_at is the latch: set only where it is NULL (see
-- episode.go); a rearm sets it back to NULL.
CREATE TABLE IF NOT EXISTS once.latches (
	name       text        NOT NULL,
	key        text        NOT NULL,
	fired_at   timestamptz NULL,
	firings    bigint      NOT NULL CHECK (firings >= 0),
	token      text        NOT NULL,
	rearmed_at timestamptz NULL,
	created_at timestamptz NOT NULL DEFAULT clock_timestamp(),
	PRIMARY KEY (name, key)
);
COMMENT ON TABLE once.latches IS 'once episode guards: fired_at NULL means armed (the next call fires), set means the current episode has fired. firings counts episodes fired; rearmed_at is the last rearm.';
COMMENT ON COLUMN once.latches.token IS 'the token of the call that fired the latch last: a call that lost its firing''s answer rearms the latch only if it still holds that token.';

-- statement: once per count. One row per unit held against a guard's cap, numbered below
-- the cap: reservations of one key insert rows of their own and commit side by side, and the
-- primary key keeps the cap, since no two reservations can hold one slot and none takes a
-- slot at or above its cap.
CREATE TABLE IF NOT EXISTS once.counter_slots (
	name        text        NOT NULL,
	key         text        NOT NULL,
	slot        bigint      NOT NULL CHECK (slot >= 0),
	token       text        NOT NULL,
	reserved_at timestamptz NOT NULL DEFAULT clock_timestamp(),
	PRIMARY KEY (name, key, slot)
);
COMMENT ON TABLE once.counter_slots IS 'once statement guards: one row per unit held, per guard name and key; a key uses as many units as it has rows. slot numbers the unit below the cap it was reserved under; token names the reservation holding it.';

-- A Statement guard finds a full key without counting its units: once.counter_full holds,
-- per guard name and key, a cap below which every slot was held when a refused reservation
-- saw it so. A refusal of a full key then reads one row (and checks no slot sits at or above
-- that cap) instead of counting the key's slot rows, and takes no lock.
--
-- Only a slot given back can make such a row untrue, so every delete of slots clears the
-- row and bumps its epoch, in the deleting transaction (the triggers below, which catch a
-- delete by hand too, and an update by hand that moves a slot). A refusal marks the key full
-- only if the epoch is still the one its snapshot saw, checked under the row's lock: a
-- give-back committed after the refusal's snapshot stops the mark. A TRUNCATE of the slots
-- fires no delete trigger; its own trigger clears every mark.
CREATE TABLE IF NOT EXISTS once.counter_full (
	name  text   NOT NULL,
	key   text   NOT NULL,
	cap   bigint NULL,
	epoch bigint NOT NULL DEFAULT 0,
	PRIMARY KEY (name, key)
);
COMMENT ON TABLE once.counter_full IS 'once statement guards: per guard name and key, a cap below which every slot of once.counter_slots is held (NULL: not known full). Derived from once.counter_slots, read to refuse a full key without counting; epoch counts the deletes of the key''s slots.';
CREATE OR REPLACE FUNCTION once.counter_slots_given_back() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
	INSERT INTO once.counter_full AS f (name, key, cap, epoch)
	SELECT DISTINCT name, key, NULL::bigint, 1 FROM gone
	ON CONFLICT (name, key) DO UPDATE SET cap = NULL, epoch = f.epoch + 1;
	RETURN NULL;
END
$$;
COMMENT ON FUNCTION once.counter_slots_given_back() IS 'once statement guards: a key whose slots are deleted is no longer known full (once.counter_full).';
CREATE OR REPLACE TRIGGER counter_slots_given_back AFTER DELETE ON once.counter_slots
REFERENCING OLD TABLE AS gone FOR EACH STATEMENT EXECUTE FUNCTION once.counter_slots_given_back();
CREATE OR REPLACE TRIGGER counter_slots_moved AFTER UPDATE ON once.counter_slots
REFERENCING OLD TABLE AS gone FOR EACH STATEMENT EXECUTE FUNCTION once.counter_slots_given_back();
-- TRUNCATE holds the slots' ACCESS EXCLUSIVE lock until it commits, and a refusal reads the
-- slots in the statement that marks, so no mark is made across it: clearing the marks made
-- before it is enough.
CREATE OR REPLACE FUNCTION once.counter_slots_truncated() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
	UPDATE once.counter_full SET cap = NULL, epoch = epoch + 1 WHERE cap IS NOT NULL;
	RETURN NULL;
END
$$;
COMMENT ON FUNCTION once.counter_slots_truncated() IS 'once statement guards: a TRUNCATE of once.counter_slots leaves no key known full (once.counter_full).';
CREATE OR REPLACE TRIGGER counter_slots_truncated AFTER TRUNCATE ON once.counter_slots
FOR EACH STATEMENT EXECUTE FUNCTION once.counter_slots_truncated();

-- lease: one holder at a time, expiring by itself. One row per guard and key, kept after
-- release so the fence only ever grows.
CREATE TABLE IF NOT EXISTS once.leases (
	name        text        NOT NULL,
	key         text        NOT NULL,
	holder      text        NOT NULL,
	fence       bigint      NOT NULL CHECK (fence > 0),
	acquired_at timestamptz NOT NULL,
	expires_at  timestamptz NOT NULL,
	released_at timestamptz NULL,
	released_by text        NULL CHECK (released_by IN ('holder', 'operator')),
	PRIMARY KEY (name, key),
	CHECK ((released_at IS NULL) = (released_by IS NULL))
);
COMMENT ON TABLE once.leases IS 'once lease guards: held by holder (an owner token) until expires_at (database clock) or released_at. fence grows by one at every change of holder; a write fenced with an older number comes from a holder that lost the lease.';

-- The operator console's overview of past days: per UTC day, kind and guard, the calls
-- claimed that day and where they stood when the day was rolled up (onceops.RollUp, which
-- the reaper runs first). The overview reads the days rolled up here and counts the rest
-- live, so no claim pays for the console and a window of weeks reads a few rows per day.
CREATE TABLE IF NOT EXISTS once.guard_days (
	day       date   NOT NULL,
	kind      text   NOT NULL,
	name      text   NOT NULL,
	calls     bigint NOT NULL,
	done      bigint NOT NULL,
	failed    bigint NOT NULL,
	released  bigint NOT NULL,
	in_flight bigint NOT NULL,
	uncertain bigint NOT NULL,
	retried   bigint NOT NULL,
	stale     bigint NOT NULL,
	PRIMARY KEY (day, kind, name)
);
COMMENT ON TABLE once.guard_days IS 'once roll-ups for the operator console: per UTC day, guard kind (forever, open) and name, the calls claimed that day and their states when the day was rolled up; uncertain ones are counted live by the console.';
-- The days rolled up: a day with no calls has no rows in once.guard_days, and is still done.
CREATE TABLE IF NOT EXISTS once.rolled_days (
	day       date        PRIMARY KEY,
	rolled_at timestamptz NOT NULL DEFAULT clock_timestamp()
);
COMMENT ON TABLE once.rolled_days IS 'once roll-ups: the UTC days counted into once.guard_days, and when. The days after the last one are counted live.';
-- The calls answered without running (a replay, a claim in flight, a set latch, a full cap,
-- a held lease or lock), per UTC day and guard: the work a duplicate did not cost. A
-- duplicate's answer writes nothing, so each process counts its answers in memory and adds
-- them here in one statement at most every 10 s (once.DuplicateFlushInterval) and when
-- the program calls once.FlushDuplicates; a process that dies loses what it counted since.
CREATE TABLE IF NOT EXISTS once.duplicate_days (
	day      date   NOT NULL,
	name     text   NOT NULL,
	kind     text   NOT NULL,
	status   text   NOT NULL CHECK (status IN ('duplicate', 'in flight', 'refused', 'busy')),
	answered bigint NOT NULL CHECK (answered >= 0),
	PRIMARY KEY (day, name, kind, status)
);
COMMENT ON TABLE once.duplicate_days IS 'once calls answered without running their function, per UTC day (by the answering process''s clock), guard name and kind, and why (status); counted by the processes and written every 10 s, so the last seconds of a process that died are missing.';
COMMENT ON COLUMN once.duplicate_days.status IS 'why the calls did not run, as once.Status names it: duplicate (the promise was kept: a recorded result replayed, a latch set), in flight (another holder''s claim is open), refused (a counter''s cap), busy (a lease or lock held).';
COMMENT ON COLUMN once.duplicate_days.answered IS 'how many calls were answered so: every writer adds to it, none sets it.';

-- The operator console's audit trail: every action an operator takes on once's rows (a
-- resolution, a forced release, a revival), who took it, why, and the row before and after.
CREATE TABLE IF NOT EXISTS once.audit (
	id     bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
	at     timestamptz NOT NULL DEFAULT clock_timestamp(),
	actor  text        NOT NULL,
	action text        NOT NULL,
	target text        NOT NULL,
	reason text        NOT NULL CHECK (reason <> ''),
	before jsonb       NULL,
	after  jsonb       NULL
);
CREATE INDEX IF NOT EXISTS audit_at ON once.audit (at DESC, id DESC);
CREATE INDEX IF NOT EXISTS audit_target ON once.audit (target, id);
COMMENT ON TABLE once.audit IS 'once operator actions, newest first by at: who (actor) did what (action) to which row (target: a guard name, a key or a row id), why (reason, required), and the row before and after.';
