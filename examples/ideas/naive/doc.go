// Package naive is the ideas app written the way the story says it first went wrong, kept
// beside the real one so its tests can show each duplicate happen and oncelint can point at
// each cause. Do not copy it.
//
//   - The button checks for a run in flight, then inserts one: two presses a millisecond
//     apart both pass the check and both insert (oncelint: ONCE005). Nothing in the table
//     stops a second open run.
//   - The research call carries no idempotency key: a job retried after the answer was lost
//     pays for the research again (ONCE001).
//   - The ideas call has a key, made from the clock: every retry sends a new one, so it
//     protects nothing (ONCE002).
//   - There is no failure hook and no stale rule: a run whose job gave up says
//     "researching" for ever, blocks the button for ever, and the allowance, which counts
//     every run of the month, charges the customer for it.
package naive
