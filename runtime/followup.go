package once

import (
	"encoding/json"
	"fmt"
	"strings"
	"unicode/utf8"

	"github.com/oncekit/once/runtime/internal/dbcall"
)

// followUp is an enqueued follow-up, checked and encoded, waiting for the settle.
type followUp struct {
	action, payload, providerKey string
}

// maxActionLen bounds a follow-up's action name.
const maxActionLen = 128

// FollowUp enqueues an action to deliver after the attempt settles done or failed: its row
// is written by the same statement as the outcome (a released or uncertain attempt enqueues
// nothing). payload is encoded as JSON now; nil is stored as NULL. An operation has at most
// one follow-up per action; enqueuing an action twice is refused with ErrInvalid.
func (a *Attempt) FollowUp(action string, payload any) error {
	if action == "" || len(action) > maxActionLen || !utf8.ValidString(action) || strings.ContainsFunc(action, dbcall.IsControl) {
		return fmt.Errorf("%w: operation %s: follow-up action %q must be 1 to %d bytes of printable text", ErrInvalid, a.id, action, maxActionLen)
	}
	f := followUp{action: action, providerKey: ProviderKey(action, a.id)}
	if payload != nil {
		b, err := json.Marshal(payload)
		if err != nil {
			return fmt.Errorf("%w: operation %s: follow-up %s: payload: %v", ErrInvalid, a.id, action, err)
		}
		f.payload = string(b)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	for _, old := range a.followups {
		if old.action == action {
			return fmt.Errorf("%w: operation %s: follow-up %s enqueued twice", ErrInvalid, a.id, action)
		}
	}
	a.followups = append(a.followups, f)
	return nil
}

// followUpColumns turns follow-ups into the three arrays the settle statement unnests:
// actions, payloads, provider keys.
func followUpColumns(fs []followUp) []any {
	actions := make([]string, len(fs))
	payloads := make([]string, len(fs))
	keys := make([]string, len(fs))
	for i, f := range fs {
		actions[i], payloads[i], keys[i] = f.action, f.payload, f.providerKey
	}
	return []any{actions, payloads, keys}
}
