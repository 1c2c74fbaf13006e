-- The runtime this down returns to counts a key's slots for every reservation and never
-- reads once.counter_full. Its marks are deleted with the trigger that keeps them true: that
-- runtime gives slots back without clearing them, so a mark kept would be read as true again
-- after the next up. The table stays, empty, for the down asked for by name to drop.
DROP TRIGGER IF EXISTS counter_slots_truncated ON once.counter_slots;
DROP FUNCTION IF EXISTS once.counter_slots_truncated();
DROP TRIGGER IF EXISTS counter_slots_moved ON once.counter_slots;
DROP TRIGGER IF EXISTS counter_slots_given_back ON once.counter_slots;
DROP FUNCTION IF EXISTS once.counter_slots_given_back();
DELETE FROM once.counter_full;
