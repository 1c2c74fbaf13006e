package once

import "time"

// The statements the guards send, for the benchmarks' bare side: the same text, so that a
// comparison measures only what a guard adds around its SQL.
const (
	ReserveSQL      = reserveSQL
	GroupReserveSQL = groupReserveSQL
	FullSQL         = fullSQL
	FirstSQL        = firstSQL
	FireSQL         = fireSQL
	ClaimSQL        = claimSQL
	AcquireSQL      = acquireSQL
	ReleaseSQL      = releaseSQL
)

// SetOpenDuplicateShare is SetDuplicateShare for an Open guard's claims: above an eighth,
// a claim reads the open claim it meets in the same statement.
func SetOpenDuplicateShare(name string, share float64) {
	historyIn(&openHistories, name).share.Store(int32(share * shareOne))
}

// SetStatementRefusalShare is SetDuplicateShare for a Statement guard's reservations: above
// an eighth, a reservation first reads whether the key is marked full.
func SetStatementRefusalShare(name string, share float64) {
	reserveHistoryOf(name).refused.share.Store(int32(share * shareOne))
}

// SetStatementBusyShare sets a Statement guard's running share of reservations that met a
// key holding units: at or below an eighth, a reservation of one unit first sends the insert
// of a new key's first slot.
func SetStatementBusyShare(name string, share float64) {
	reserveHistoryOf(name).busy.share.Store(int32(share * shareOne))
}

// ServerRefusal is the check a guard makes of the server's parameters, over a lookup.
var ServerRefusal = serverRefusal

// SetDuplicateFlush makes the timed write of the calls answered without running come every
// interval and send sql, until the returned function restores both.
func SetDuplicateFlush(interval time.Duration, sql string) (restore func()) {
	oldInterval, oldSQL := flushEvery.Swap(int64(interval)), flushSQL.Swap(&sql)
	return func() { flushEvery.Store(oldInterval); flushSQL.Store(oldSQL) }
}

// FlushDuplicatesSQL is the statement that adds a process's counts to their rows.
func FlushDuplicatesSQL() string { return *flushSQL.Load() }
