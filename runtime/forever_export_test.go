package once

// The statements a Forever guard sends, for the benchmarks and tests that send them bare.
const (
	ForeverClaimSQL        = foreverClaimSQL
	ForeverClaimPlainSQL   = foreverClaimPlainSQL
	ForeverReadSQL         = foreverReadSQL
	ForeverSettleDoneSQL   = foreverSettleDoneSQL
	ForeverSettleResultSQL = foreverSettleResultSQL
)

// NewOperationID draws an operation id as a claim does (ForeverClaimSQL's $4).
func NewOperationID() string { return newOperationID() }

// SetDuplicateShare sets the running share of duplicate claims this process has seen for
// the guard name (0 to 1), so that tests and benchmarks choose whether its claims read the
// key's row first.
func SetDuplicateShare(name string, share float64) {
	historyOf(name).share.Store(int32(share * shareOne))
}
