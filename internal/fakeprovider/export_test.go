package fakeprovider

// WithHold makes every effect wait until release is closed, so a test can keep a request in
// progress for as long as it needs, instead of for a latency it hopes is long enough.
func WithHold(release <-chan struct{}) Option { return func(s *Server) { s.hold = release } }
