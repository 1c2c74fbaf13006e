package once

// The statements a Forever guard sends, for the benchmarks that compare the guard with them
// sent bare.
const (
	ForeverClaimSQL  = foreverClaimSQL
	ForeverReadSQL   = foreverReadSQL
	ForeverSettleSQL = foreverSettleSQL
)
