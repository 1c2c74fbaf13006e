package welcome

import (
	"context"
	"testing"
)

// Tests call the body directly: not reported.
func TestSendWelcome(t *testing.T) {
	s := &Sender{}
	_ = s.SendWelcome(context.Background(), User{ID: 1})
}
