package paidactions

import (
	"encoding/hex"
	"errors"
	"fmt"
	"strings"

	once "github.com/oncekit/once/runtime"
)

// Kind is a paid action's type: what the provider is asked to do.
type Kind string

// The paid actions of the editor.
const (
	// Regenerate asks for a new take of a candidate, following the instruction.
	Regenerate Kind = "regenerate"
	// Promote upscales a candidate into the job's master.
	Promote Kind = "promote"
	// Render renders the final video from a candidate.
	Render Kind = "render"
)

// MaxInstruction is the longest instruction accepted, in bytes.
const MaxInstruction = 2000

// ErrBadAction: a paid action cannot be claimed as asked (an unknown action, a missing
// candidate, an instruction where none is taken). Nothing was written.
var ErrBadAction = errors.New("bad paid action")

// PaidAction is what a click asks for, reduced to its stable parts: the parts that make two
// requests the same intention. Anything else a request carries (when it was clicked, which
// tab sent it) is not part of the action, so a double click or a retry is the same action,
// and a changed instruction or a new render-inputs version is a new one.
type PaidAction struct {
	JobID               int64  `json:"job_id"`
	Action              Kind   `json:"action"`
	CandidateID         int64  `json:"candidate_id"`
	RenderInputsVersion int    `json:"render_inputs_version"`
	Instruction         string `json:"instruction,omitempty"`
}

// Normalize returns the action with its instruction trimmed of surrounding space, the form
// its key and its row are made from: "brighter " and "brighter" are one intention.
func (a PaidAction) Normalize() PaidAction {
	a.Instruction = strings.TrimSpace(a.Instruction)
	return a
}

// Validate reports what makes the action impossible to claim, wrapping ErrBadAction.
func (a PaidAction) Validate() error {
	switch a.Action {
	case Regenerate, Promote, Render:
	case "":
		return fmt.Errorf("%w: action is required (regenerate, promote or render)", ErrBadAction)
	default:
		return fmt.Errorf("%w: unknown action %q (regenerate, promote or render)", ErrBadAction, a.Action)
	}
	switch {
	case a.JobID <= 0:
		return fmt.Errorf("%w: job_id must be a positive id", ErrBadAction)
	case a.CandidateID <= 0:
		return fmt.Errorf("%w: %s needs candidate_id", ErrBadAction, a.Action)
	case a.RenderInputsVersion <= 0:
		return fmt.Errorf("%w: %s needs render_inputs_version, the snapshot of voice and product lock it uses", ErrBadAction, a.Action)
	case len(a.Instruction) > MaxInstruction:
		return fmt.Errorf("%w: instruction is %d bytes, over the %d-byte limit", ErrBadAction, len(a.Instruction), MaxInstruction)
	case a.Action == Promote && strings.TrimSpace(a.Instruction) != "":
		return fmt.Errorf("%w: promote takes no instruction (it upscales the candidate as it is)", ErrBadAction)
	}
	return nil
}

// Key returns the action's key: the hex SHA-256 of the canonical JSON of its stable parts
// (once.Fingerprint), so it is the same in every process, for every client that computes it,
// whatever order the fields arrive in.
func (a PaidAction) Key() (string, error) {
	sum, err := once.Fingerprint(a.Normalize())
	if err != nil {
		return "", fmt.Errorf("action key: %w", err)
	}
	return hex.EncodeToString(sum), nil
}

// Price is what the provider charges for an action, in millionths of a dollar.
func (k Kind) Price() int64 {
	switch k {
	case Regenerate:
		return 40_000
	case Promote:
		return 15_000
	case Render:
		return 250_000
	}
	return 0
}

// path is the provider endpoint that performs the action.
func (k Kind) path() string {
	switch k {
	case Regenerate:
		return "/v1/regenerations"
	case Promote:
		return "/v1/upscales"
	default:
		return "/v1/renders"
	}
}

// resultKind is the kind of candidate the action produces.
func (k Kind) resultKind() string {
	switch k {
	case Regenerate:
		return "regenerated"
	case Promote:
		return "promoted"
	default:
		return "render"
	}
}
