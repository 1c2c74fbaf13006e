package once

import "time"

// The statements a Forever guard sends, for the benchmarks that compare the guard with them
// sent bare.
const (
	ForeverClaimSQL  = foreverClaimSQL
	ForeverReadSQL   = foreverReadSQL
	ForeverSettleSQL = foreverSettleSQL
)

// NewProviderRef draws a provider reference as a claim does (ForeverClaimSQL's $6).
func NewProviderRef() string { return newProviderRef() }

// SetDuplicateShare sets the running share of duplicate claims this process has seen for
// the guard name (0 to 1), so that tests and benchmarks choose whether its claims are
// pipelined.
func SetDuplicateShare(name string, share float64) {
	historyOf(name).share.Store(int32(share * shareOne))
}

// SetResolveUnseen turns the clean-up of claims whose outcome the caller did not see on or
// off, so that a test can show what the clean-up prevents. It returns the previous setting.
func SetResolveUnseen(on bool) bool {
	old := resolveUnseen
	resolveUnseen = on
	return old
}

// UnseenWithdrawn returns how many claims, whose outcome their callers did not see, the
// clean-up has found landed and withdrawn in this process.
func UnseenWithdrawn() int64 { return unseenWithdrawn.Load() }

// WaitLateCleanups waits for the withdrawals that the clean-up repeats in the background
// behind a pooler, and returns how many claims the repeats have found in this process.
func WaitLateCleanups() int64 {
	for lateCleanups.Load() > 0 {
		time.Sleep(10 * time.Millisecond)
	}
	return lateFound.Load()
}
