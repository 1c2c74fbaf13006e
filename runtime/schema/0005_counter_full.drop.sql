-- The runtime this down returns to counts a key's slots for every reservation and never
-- reads once.counter_full, which holds nothing the slots do not say.
DROP TRIGGER IF EXISTS counter_slots_truncated ON once.counter_slots;
DROP FUNCTION IF EXISTS once.counter_slots_truncated();
DROP TRIGGER IF EXISTS counter_slots_moved ON once.counter_slots;
DROP TRIGGER IF EXISTS counter_slots_given_back ON once.counter_slots;
DROP FUNCTION IF EXISTS once.counter_slots_given_back();
-- Written only when the user asks for it by name (oncegen -down-drops-once-tables).
-- squawk-ignore ban-drop-table
DROP TABLE IF EXISTS once.counter_full;
