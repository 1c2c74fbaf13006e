package directive

import (
	"go/ast"
	"go/token"
	"time"
	"unicode"
	"unicode/utf8"
)

// Prefix is how every directive line begins.
const Prefix = "//once:"

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

	// The kinds' own arguments follow, each field one argument with one meaning; the kind's
	// row in the table (SpecOf) says which it takes, and sets them.

	// NoWait is transaction's wait=false: report busy instead of waiting for the lock.
	NoWait bool
	// LockTimeout is transaction's timeout=, its lock timeout (0: the database's).
	LockTimeout time.Duration
	// LeaseTTL is lease's ttl=, how long a lease lives unless renewed.
	LeaseTTL time.Duration
	// LeaseWait is lease's wait=, how long a call waits for the holder (0: it does not wait).
	LeaseWait time.Duration
	// Stale is open's and forever's stale=: how long a claim may show no life before it is
	// closed as stale (0: the runtime's default, 45 s from the last heartbeat on a pool).
	Stale time.Duration
	// Status and OpenValues are open's status= and open=, in its table= form: the status
	// column and the values that mean open.
	Status     string
	OpenValues []string
	// Latch is episode's latch=, the latch column of its table= form.
	Latch string
	// Cap and N are statement's cap= and n=: the cap, and units per call (key= form; the
	// literal 1 by default). Each is an integer literal or an expression over the
	// parameters; the table= form's cap is a literal.
	Cap IntOrExpr
	N   IntOrExpr
	// Counter is statement's counter=, the counter column of its table= form.
	Counter string
	// ProviderPrefix is provider's prefix= (default: the guard name).
	ProviderPrefix string
	// ProviderWindow is provider's ttl=, how long the provider remembers a key (0: not
	// stated).
	ProviderWindow time.Duration
	// Retain is forever's retain=, how long the promise is kept (0: for ever).
	Retain time.Duration
	// Scope is forever's scope= expression (a tenant), if any.
	Scope *Expr
	// Fingerprint holds forever's fingerprint= expressions, the input a reused key must match.
	Fingerprint []Expr
	// RepeatSafe is forever's repeat=safe: the effect may run again after an uncertain end.
	RepeatSafe bool
	// ForeverWait is forever's wait=, how long a call that finds its key in flight waits for
	// the holder's recorded result (0: it answers in flight at once).
	ForeverWait time.Duration
	// Result is forever's result=: what is recorded of the function's value ("value",
	// "none" or "digest"; "" when not given, which records the value).
	Result string
	// Seal is forever's seal= expression, a once.Sealer the recorded value passes through.
	Seal *Expr
	// NullsNotDistinct is forever's nulls=notdistinct, in its table= form: the index treats
	// NULL keys as equal.
	NullsNotDistinct bool
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

// Spec is the row of d's kind in the table.
func (d *Directive) Spec() *Spec { return SpecOf(d.Kind) }

// Mechanism says in a few words what keeps d's promise, for the inventory.
func (d *Directive) Mechanism() string {
	if t := d.tableForm(); t != nil {
		return t.Mechanism(d)
	}
	return d.Spec().Mechanism(d)
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

// The generated names follow Go's export rule from the function they come from: a
// generated name is exported exactly when the function's name is, so an unexported
// function's wrapper, rearm function and conflict constant add nothing to the package's API.

// WrapperName is the name of the generated guard wrapper of the function F: FOnce (fOnce
// for f).
func WrapperName(funcName string) string { return funcName + "Once" }

// RearmName is the name of the generated function that rearms the episode of F: RearmF,
// and rearmF for an unexported f (rearmSendAlert for sendAlert).
func RearmName(funcName string) string {
	if token.IsExported(funcName) {
		return "Rearm" + funcName
	}
	r, size := utf8.DecodeRuneInString(funcName)
	if up := unicode.ToUpper(r); up != r {
		return "rearm" + string(up) + funcName[size:]
	}
	return "rearm" + funcName // _f: rearm_f
}

// ConflictName is the name of the generated constant holding the conflict clause of a
// table= form of F: FConflict (fConflict for f).
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
