package once

// contextKey keys the values guards put into a context. One unexported type for the package
// means no other package can read or forge them.
type contextKey int

const (
	requestScopeKey contextKey = iota + 1
	claimKey
	leaseKey
	providerKeyKey
	attemptKey
)
