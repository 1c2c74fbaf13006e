package directive

import (
	"go/ast"
	"go/token"
	"time"
)

// Prefix is how every directive line begins.
const Prefix = "//once:"

// Kind is the length of a declared promise.
type Kind string

// The eight kinds, from the shortest promise to the longest (see Rank).
const (
	Request     Kind = "request"
	Transaction Kind = "transaction"
	Lease       Kind = "lease"
	Open        Kind = "open"
	Episode     Kind = "episode"
	Statement   Kind = "statement"
	Provider    Kind = "provider"
	Forever     Kind = "forever"
)

// Kinds lists every kind from the shortest promise to the longest: a request, a
// transaction, a lease's TTL, while work is open, until an episode is rearmed, a counter's
// period, the provider's idempotency window, for ever.
var Kinds = []Kind{Request, Transaction, Lease, Open, Episode, Statement, Provider, Forever}

// Rank is k's place in Kinds (0 for the shortest promise), or -1 for an unknown kind.
func (k Kind) Rank() int {
	for i, v := range Kinds {
		if v == k {
			return i
		}
	}
	return -1
}

// Promise says, in a few words, how long a promise of kind k lasts.
func (k Kind) Promise() string {
	switch k {
	case Request:
		return "once per request"
	case Transaction:
		return "once per transaction: one holder of the decision at a time"
	case Lease:
		return "one holder at a time, expiring by itself"
	case Open:
		return "once while the work is open"
	case Episode:
		return "once per episode, until rearmed"
	case Statement:
		return "once per unit of a counter's cap"
	case Provider:
		return "once at the provider, by its idempotency key"
	case Forever:
		return "once for ever"
	}
	return "unknown"
}

// Directive is one validated //once: directive and the function it sits on.
type Directive struct {
	// Kind is the promise length.
	Kind Kind
	// Slash is the position of the directive's "//"; Position is the same, resolved.
	Slash    token.Pos
	Position token.Position
	// Text is the directive line as written.
	Text string
	// Func is the function or method the directive is on.
	Func *ast.FuncDecl
	// Package is the name of the package the function is in.
	Package string
	// Args are the arguments in source order.
	Args []Arg

	// Name is the guard's stored name: name= or, by default, Package.Func (Package.Type.Func
	// for a method). NameSet reports that name= gave it.
	Name    string
	NameSet bool
	// Key holds the key= expressions; empty in the table= forms.
	Key []Expr

	// Table is the table= table (maybe schema-qualified); empty without table=.
	Table string
	// Columns are the columns= key columns of the table= forms.
	Columns []string
	// Status and OpenValues are an open claim's status column and the values that mean open.
	Status     string
	OpenValues []string
	// Latch is an episode's latch column; Counter a statement's counter column.
	Latch   string
	Counter string
	// NullsNotDistinct asks a forever index to treat NULL keys as equal.
	NullsNotDistinct bool

	// Cap and N are a statement's cap and units per call: an integer literal or an
	// expression over the parameters. N defaults to the literal 1.
	Cap IntOrExpr
	N   IntOrExpr
	// NoWait is transaction's wait=false: report busy instead of waiting for the lock.
	NoWait bool
	// Timeout is transaction's lock timeout (0: the database's).
	Timeout time.Duration
	// Stale is how long an open (or forever) claim may show no life before it is closed as
	// stale (0: the runtime's default, 45 s from the last heartbeat on a pool).
	Stale time.Duration
	// Retain is how long a forever promise is kept (0: for ever).
	Retain time.Duration
	// TTL is a lease's time to live, or a provider's idempotency window (0: not given).
	TTL time.Duration
	// Wait is how long a lease call waits for the holder (0: it does not wait).
	Wait time.Duration
	// Scope is forever's scope= expression (a tenant), if any.
	Scope *Expr
	// Fingerprint holds forever's fingerprint= expressions, the input a reused key must match.
	Fingerprint []Expr
	// RepeatSafe is forever's repeat=safe: the effect may run again after an uncertain end.
	RepeatSafe bool
	// ProviderPrefix is provider's prefix= (default: the guard name).
	ProviderPrefix string
}

// Arg is one arg=value argument as written.
type Arg struct {
	Name  string
	Value string
	// Pos is the position of the argument's first character (its quote, if quoted);
	// ValuePos that of its value's first character.
	Pos      token.Pos
	ValuePos token.Pos
}

// Expr is one Go expression from a directive, as text, with the position of its first
// character in the file.
type Expr struct {
	Text string
	Pos  token.Pos
}

// IntOrExpr is an argument that is either an integer literal or a Go expression.
type IntOrExpr struct {
	// IsLit reports a literal, held in Lit; otherwise Expr holds the expression.
	IsLit bool
	Lit   int64
	Expr  Expr
}

// Arg returns the argument called name, if the directive has it.
func (d *Directive) Arg(name string) (Arg, bool) {
	for _, a := range d.Args {
		if a.Name == name {
			return a, true
		}
	}
	return Arg{}, false
}

// HasTable reports a table= form: the promise lives on the user's rows.
func (d *Directive) HasTable() bool { return d.Table != "" }

// FuncName is the name of the function, qualified by its receiver type for a method
// (T.Method), as written in the default guard name.
func (d *Directive) FuncName() string {
	if t := ReceiverTypeName(d.Func); t != "" {
		return t + "." + d.Func.Name.Name
	}
	return d.Func.Name.Name
}

// WrapperName is the name of the generated guard wrapper of the function F: FOnce.
func WrapperName(funcName string) string { return funcName + "Once" }

// RearmName is the name of the generated function that rearms the episode of F: RearmF.
func RearmName(funcName string) string { return "Rearm" + funcName }

// ConflictName is the name of the generated constant holding the conflict clause of a
// table= form of F: FConflict.
func ConflictName(funcName string) string { return funcName + "Conflict" }

// ReceiverTypeName returns the receiver's type name of a method, without pointer or type
// parameters, or "" for a function.
func ReceiverTypeName(fn *ast.FuncDecl) string {
	if fn == nil || fn.Recv == nil || len(fn.Recv.List) == 0 {
		return ""
	}
	t := fn.Recv.List[0].Type
	for {
		switch x := t.(type) {
		case *ast.StarExpr:
			t = x.X
		case *ast.ParenExpr:
			t = x.X
		case *ast.IndexExpr:
			t = x.X
		case *ast.IndexListExpr:
			t = x.X
		case *ast.Ident:
			return x.Name
		default:
			return ""
		}
	}
}
