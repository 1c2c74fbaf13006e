package model

import (
	"fmt"
	"strings"
)

// FuncFact summarises what calling a function does, for the packages that call it. It is
// exported only when something in it is set.
type FuncFact struct {
	// Effects are the effects a call performs that nothing inside it covers.
	Effects []Effect
	// Sends are the requests it sends that no catalogue entry classifies.
	Sends []Send
	// Keys are the parameters that become an idempotency key, and for what.
	Keys []KeyParam
	// Result is what its results derive from.
	Result Flow
	// Kind is the //once: kind declared on it, Wrapper the generated guard's name, and
	// Latch marks a table= declaration: a claim written by hand, whose callers' code after
	// the call runs under it.
	Kind    string
	Wrapper string
	Latch   bool
	// Retries marks a function that sends again by itself after a failure; RetryArg, one
	// that calls a function it is given again after a failure (its parameter, from 1).
	Retries  bool
	RetryArg int
	// SetVerdict marks a function answering with a bool from a check and write of a set
	// that lasts the process (ONCE003).
	SetVerdict bool
}

// AFact marks FuncFact as a fact.
func (*FuncFact) AFact() {}

func (f *FuncFact) String() string {
	var parts []string
	for _, e := range f.Effects {
		parts = append(parts, "effect("+e.Via+")")
	}
	for _, s := range f.Sends {
		parts = append(parts, "send("+s.Boundary+")")
	}
	for _, k := range f.Keys {
		parts = append(parts, fmt.Sprintf("key(%d,%s)", k.Param, k.Kind))
	}
	add := func(on bool, part string) {
		if on {
			parts = append(parts, part)
		}
	}
	add(f.Result.Flags != 0, "result("+f.Result.Source+")")
	add(f.Kind != "", "declared("+f.Kind+")")
	add(f.Retries, "retries")
	add(f.RetryArg > 0, fmt.Sprintf("retries(%d)", f.RetryArg))
	add(f.SetVerdict, "setverdict")
	return strings.Join(parts, " ")
}

func (f *FuncFact) empty() bool {
	return len(f.Effects) == 0 && len(f.Sends) == 0 && len(f.Keys) == 0 && f.Result.Flags == 0 &&
		len(f.Result.Params) == 0 && f.Kind == "" && !f.Retries && f.RetryArg == 0 && !f.SetVerdict
}

// PackageFact marks a package whose functions carry facts, and holds what its importers
// need beyond them: the types whose methods perform effects (for calls through an
// interface) and the function types its code calls as a framework calls a handler.
type PackageFact struct {
	Impls     []Impl
	RootTypes []string
}

// AFact marks PackageFact as a fact.
func (*PackageFact) AFact() {}

func (f *PackageFact) String() string {
	return fmt.Sprintf("impls=%d roots=%v", len(f.Impls), f.RootTypes)
}

// Impl is a type of the package with methods that perform effects.
type Impl struct {
	// Type is the type's full name; Methods its method set (of the pointer), each as
	// methodKey writes it.
	Type    string
	Methods []string
	// Effects holds, per method name, what the method's FuncFact holds, since the
	// method of an unexported type is out of an importer's sight.
	Effects map[string][]Effect
}

// Effect is one effect a function performs when called, at a site of the analysed code.
type Effect struct {
	// Site is the position (file:line:col) of the call in the analysed code that makes
	// the effect; Func names the function holding it. Both are empty in a dependency's
	// facts: its caller in the analysed code makes the site.
	Site string
	Func string
	// Made is where the effect itself is made when Site is a call giving its content.
	Made string
	// Via names what is called at the site; What completes "a retry ... again"; Class is
	// the catalogue's class.
	Via   string
	What  string
	Class string
	// Params are the parameters (receiver first) whose values flow into the effect's
	// content: its natural key, as far as data flow shows it.
	Params []int
	// KeyParam is 1 + the parameter whose field carries the provider's idempotency key,
	// for a caller to set; 0 when the key's field is not a parameter's.
	KeyParam            int
	KeyField, KeySetter string
	// Fresh marks content made from a random source on the way: a new code each time.
	Fresh bool
	// Repeat says what runs the effect again, once a path from such code is found;
	// RepeatAt is its position.
	Repeat   string
	RepeatAt string
	// Reported: a finding has been made at Site. Ignored: an //oncelint:ignore ONCE001
	// covers Site.
	Reported bool
	Ignored  bool
	// Retried marks a repeat by the code's own retry, the one that makes a request a finding.
	Retried bool
	// Impls are the sites of the implementations an interface call reaches. Iface (its
	// method set, as methodKey writes it) and Method mark an open call instead: one through
	// an interface no implementation in sight answers.
	Impls  []string
	Iface  []string
	Method string
}

// RequestClass is the class of a POST or PATCH no catalogue entry classifies, a finding
// only where the module's own code retries it; RequestFix is the fix such a finding names.
const (
	RequestClass = "request"
	RequestFix   = "send an idempotency key the receiver honours: HTTP does not let a client repeat such a request unasked (RFC 9110, 9.2.2)"
)

// known reports an effect the catalogue classifies: not an open call, nor a request.
func (e *Effect) known() bool { return !e.open() && e.Class != RequestClass }

// Send is a request sent through a transport to an endpoint no catalogue entry names.
type Send struct {
	// Boundary is the full name of the function a catalogue line would classify: the
	// analysed code's own function that calls the transport, or the dependency's function
	// the analysed code calls.
	Boundary string
	// Method is the HTTP method when known; MethodParam, URLParam and ReqParam are 1 + the
	// parameter that gives the method, the URL or the whole request, for callers to give.
	Method                          string
	MethodParam, URLParam, ReqParam int
	// URL holds the URL's constant parts known so far; Lead marks the first as its start.
	URL  []string
	Lead bool
	// Retries marks a client that sends again by itself. Async marks a send a goroutine
	// the call starts makes: a background worker's, not the call's own. Reads marks one
	// whose answer's body is read: a query's answer, not a delivery's acknowledgement.
	Retries, Async, Reads bool
	// Site is where the send became definite, in the analysed code.
	Site string
}

func (s *Send) pending() bool { return s.MethodParam > 0 || s.URLParam > 0 || s.ReqParam > 0 }

// KeyParam is a parameter that becomes an idempotency key of the given kind ("provider"
// for a provider's key, else the //once: kind whose key it is).
type KeyParam struct {
	Param int
	Kind  string
}

// Flow says what a value derives from.
type Flow struct {
	// Flags are the unstable sources it derives from.
	Flags Flags
	// Params are the parameters it derives from; Buckets those among them whose clock
	// values are bucketed on the way (a day, an hour).
	Params  []int
	Buckets []int
	// Source names the first unstable source found: "uuid.NewString", or
	// "ids.New, which returns uuid.NewString".
	Source string
}

// Flags are the unstable sources a value derives from.
type Flags uint8

// The unstable sources.
const (
	Clock  Flags = 1 << iota // the clock, to the nanosecond
	Random                   // a random source
	Bucket                   // the clock, cut to a day or an hour
)
