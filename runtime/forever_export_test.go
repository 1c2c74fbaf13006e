package once

// The statements a Forever guard sends, for the benchmarks that compare the guard with them
// sent bare.
const (
	ForeverClaimSQL  = foreverClaimSQL
	ForeverReadSQL   = foreverReadSQL
	ForeverSettleSQL = foreverSettleSQL
)

// SetDuplicateShare sets the running share of duplicate claims this process has seen for
// the guard name (0 to 1), so that tests and benchmarks choose whether its claims are
// pipelined.
func SetDuplicateShare(name string, share float64) {
	historyOf(name).share.Store(int32(share * shareOne))
}
