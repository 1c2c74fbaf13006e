package once

// The statements the guards send, for the benchmarks' bare side: the same text, so that a
// comparison measures only what a guard adds around its SQL.
const (
	ReserveSQL = reserveSQL
	FireSQL    = fireSQL
	ClaimSQL   = claimSQL
	AcquireSQL = acquireSQL
	ReleaseSQL = releaseSQL
)

// ServerRefusal is the check a guard makes of the server's parameters, over a lookup.
var ServerRefusal = serverRefusal
