package model

import "github.com/oncekit/once/internal/directive"

// RuntimePath is the import path of once's runtime package.
const RuntimePath = "github.com/oncekit/once/runtime"

// guardCall is a function of the runtime that runs a function under a promise, or that
// takes an idempotency key: its kind, and the arguments (receiver not counted) holding
// the key and the function run (-1 for none).
type guardCall struct {
	kind    directive.Kind
	key, fn int
}

// guardCalls are the runtime's guard calls by full identity (type arguments left out, as
// funcName writes them). A rename of the runtime's guards is an edit of this table.
var guardCalls = map[string]guardCall{
	"(" + RuntimePath + ".Request).Do":     {directive.Request, 1, 2},
	RuntimePath + ".RequestValue":          {directive.Request, 2, 3},
	"(" + RuntimePath + ".Transaction).Do": {directive.Transaction, 2, 3},
	"(" + RuntimePath + ".Statement).Do":   {directive.Statement, 2, 4},
	"(" + RuntimePath + ".Episode).Do":     {directive.Episode, 2, 3},
	"(" + RuntimePath + ".Open).Do":        {directive.Open, 2, 3},
	"(" + RuntimePath + ".Lease).Do":       {directive.Lease, 2, 3},
	"(" + RuntimePath + ".Forever).Do":     {directive.Forever, 2, 3},
	RuntimePath + ".ForeverValue":          {directive.Forever, 3, 4},
	"(" + RuntimePath + ".Provider).Do":    {directive.Provider, 1, 2},
	"(" + RuntimePath + ".Table).Do":       {directive.Forever, -1, 2},
	// Functions that take a provider's key and run nothing.
	RuntimePath + ".ProviderKey":     {directive.Provider, 1, -1},
	RuntimePath + ".WithProviderKey": {directive.Provider, 1, -1},
}

// GuardHolds reports a runtime guard call whose function runs under a promise kept in
// once's own tables: not Request's (per process), nor a Table guard's, whose promise is the
// caller's own table and leaves what else the function reads and writes to it.
func GuardHolds(name string) bool {
	g, ok := guardCalls[name]
	return ok && g.fn >= 0 && g.key >= 0 && g.kind != directive.Request
}
