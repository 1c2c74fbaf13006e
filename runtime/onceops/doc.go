// Package onceops holds the tools an operator (or a scheduled job, or the operator console)
// uses on the rows once's guards keep: what needs a person's decision, and the upkeep a
// deployment runs beside its guards.
//
//	once.operations     Lookup an operation by its key; ListUncertain, then ResolveDone,
//	                    ResolveFailed or ResolveRetry (RecordLedger for what it consumed);
//	                    ReapExpired deletes the outcomes past their retention;
//	                    RollUp counts closed days per guard for the console's overview.
//	once.followups      Drain.Run delivers them; ListDeadFollowUps, then ReviveFollowUp.
//	once.open_claims    SweepStale closes the claims whose holders stopped showing life;
//	                    CloseClaim closes one whose holder is known to be gone.
//	once.latches        Rearm ends a key's episode.
//	once.counter_slots  Refund gives units of an allowance back; ResetAllowance all of them.
//	once.leases         ForceRelease frees a lease whose holder is known to be gone.
//	once.audit          Audit's methods take each action above that a person decides, with
//	                    its row (who, why, the row before and after) in the same transaction;
//	                    ListAudit reads them.
//
// A deployment runs Drain.Run continuously (or every few seconds), and ReapExpired (which
// rolls up first) and SweepStale from a scheduled job. Each function checks its arguments as the guards do
// (errors wrap once.ErrInvalid) and changes only the rows it names. A person's action goes
// through Audit, as the operator console's do.
package onceops
