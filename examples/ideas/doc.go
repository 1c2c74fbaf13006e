// Package ideas is an example app of once: an organisation presses "generate ideas", a
// worker pays a research API and a model for a run, and the organisation gets two such runs
// a month. A button is rarely pressed just once: every extra press (a double click, a
// second tab, a refresh) must land on the run already started, and the allowance must count
// only what the customer received.
//
// The promises it declares, each with the length the job needs:
//
//   - StartGeneration holds a lease per organisation (//once:lease, 10 s): a simultaneous
//     second press is turned away, and a process killed mid-start blocks nobody for longer
//     than the lease.
//   - insertRun keeps one run open per organisation (//once:open on the runs table): a
//     partial unique index is the in-flight check that cannot be raced, and a later press is
//     redirected to the open run's progress page.
//   - enqueueRun queues one job per run, for ever (//once:forever on the jobs table).
//   - researchToday spends one of the organisation's research runs of the day
//     (//once:statement, a daily cap under the monthly allowance, as a safety net).
//   - Model.Research and Model.Ideate carry provider idempotency keys derived from the run
//     (//once:provider), so a retried job is not billed twice.
//   - App.Refine refines an idea once per revision (//once:forever), and never starts a run.
//
// Every run reaches an ending: the worker's failure hook marks it failed, and the stale rule
// (StaleAfter, defined once) closes runs that no process is working on any more.
package ideas

//go:generate go tool oncegen -migrations migrations -format migrate .
