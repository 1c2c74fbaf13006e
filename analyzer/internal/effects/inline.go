package effects

import (
	"go/ast"
	"go/types"

	"golang.org/x/tools/go/types/typeutil"
)

// inlineRunners name the functions that run the closure they are given as part of the
// caller's work, before the caller's work is done (a wait group's goroutine, a once's
// body), not later or elsewhere: the functions the closure calls are still the caller's
// callees, not entry points.
var inlineRunners = map[string]bool{
	"(*sync.WaitGroup).Go":                             true,
	"(*sync.Once).Do":                                  true,
	"(*golang.org/x/sync/errgroup.Group).Go":           true,
	"(*golang.org/x/sync/errgroup.Group).TryGo":        true,
	"(*github.com/sourcegraph/conc.WaitGroup).Go":      true,
	"(*github.com/sourcegraph/conc/pool.Pool).Go":      true,
	"(*github.com/sourcegraph/conc/pool.ErrorPool).Go": true,
}

// runsInline reports whether call runs the closure it is given as part of the caller
// (see inlineRunners).
func (s *scanner) runsInline(call *ast.CallExpr) bool {
	fn, ok := typeutil.Callee(s.pass.TypesInfo, call).(*types.Func)
	return ok && inlineRunners[fn.Origin().FullName()]
}
