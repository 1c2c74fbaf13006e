package directive

import (
	"fmt"
	"go/token"
)

// Error is a mistake in a directive, at a position in the source. Both tools print it as
// Error() does, file:line:col: message; an analyzer reports Msg at Pos.
type Error struct {
	Pos      token.Pos
	Position token.Position
	Msg      string
}

// Error returns "file:line:col: message".
func (e *Error) Error() string { return e.Position.String() + ": " + e.Msg }

// errorf builds an Error at pos.
func errorf(fset *token.FileSet, pos token.Pos, format string, args ...any) *Error {
	return &Error{Pos: pos, Position: fset.Position(pos), Msg: fmt.Sprintf(format, args...)}
}
