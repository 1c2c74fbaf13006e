package catalog

import (
	"bytes"
	"cmp"
	"crypto/sha256"
	_ "embed"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"sync"
)

// Classes an effect may have.
var Classes = []string{"payment", "email", "message", "push", "model", "webhook", "paid"}

// Effect is one function, method or endpoint that does something a retry must not repeat.
type Effect struct {
	Func   string `json:"func,omitempty"`
	URL    string `json:"url,omitempty"`
	Path   string `json:"path,omitempty"`
	Effect string `json:"effect"`
	Class  string `json:"class"`
	Key    *Key   `json:"key,omitempty"`
}

// Key is how a call carries the provider's idempotency key.
type Key struct {
	Arg     int      `json:"arg"`
	Field   string   `json:"field,omitempty"`
	Setter  string   `json:"setter,omitempty"`
	Header  string   `json:"header,omitempty"`
	Headers []string `json:"headers,omitempty"`
}

// HeaderNames returns every header name the key may be sent under.
func (k *Key) HeaderNames() []string {
	if k.Header == "" {
		return k.Headers
	}
	return append([]string{k.Header}, k.Headers...)
}

// Read names a function, URL prefix or path whose calls change nothing that lasts.
type Read struct {
	Func string `json:"func,omitempty"`
	URL  string `json:"url,omitempty"`
	Path string `json:"path,omitempty"`
	Why  string `json:"why"`
}

// Transport is a function that sends a request to the network. Its endpoint is argument
// URL (with Method), or the request at argument Request; Retries marks a client that sends
// again by itself on failure.
type Transport struct {
	Func    string `json:"func"`
	URL     *int   `json:"url,omitempty"`
	Method  string `json:"method,omitempty"`
	Request *int   `json:"request,omitempty"`
	Retries bool   `json:"retries,omitempty"`
}

// Request is a function that builds a request: its method and URL arguments.
type Request struct {
	Func   string `json:"func"`
	Method int    `json:"method"`
	URL    int    `json:"url"`
}

// Retry is a helper that runs the function at argument Arg again until it succeeds.
type Retry struct {
	Func string `json:"func"`
	Arg  int    `json:"arg"`
}

// Unstable is a function whose result differs on every call: Source is clock or random.
type Unstable struct {
	Func   string `json:"func"`
	Source string `json:"source"`
}

// Root is code a framework runs again. Exactly one of Signature, Func, Embeds, Registrar
// and Delivers is set; Arg goes with Func. Delivers names a function that hands its caller
// a message (or a channel of messages) the sender delivers again until it is
// acknowledged: what the caller does after it, or in a function literal it starts, is
// done again.
type Root struct {
	Signature string `json:"signature,omitempty"`
	Func      string `json:"func,omitempty"`
	Arg       *int   `json:"arg,omitempty"`
	Embeds    string `json:"embeds,omitempty"`
	Registrar string `json:"registrar,omitempty"`
	Delivers  string `json:"delivers,omitempty"`
	Root      string `json:"root"`
}

type file struct {
	Effects    []Effect    `json:"effects"`
	Reads      []Read      `json:"reads"`
	Transports []Transport `json:"transports"`
	Requests   []Request   `json:"requests"`
	Retries    []Retry     `json:"retries"`
	Unstable   []Unstable  `json:"unstable"`
	Roots      []Root      `json:"roots"`
}

// Catalog is the lookup table. It is not modified after Load returns it, so it is safe
// for concurrent use.
type Catalog struct {
	funcs      map[string]*Effect
	urls       []*Effect
	readFuncs  map[string]bool
	readURLs   []*Read
	transports map[string]*Transport
	requests   map[string]*Request
	retries    map[string]*Retry
	unstable   map[string]string
	rootFuncs  map[string]*Root
	rootSigs   map[string]*Root
	rootLeads  []*Root // signatures ending in "...)": their leading parameters
	embeds     map[string]*Root
	registrars map[string]*Root
	delivers   map[string]*Root
	pkgs       map[string]bool
	// Files names the files read, for messages; Hash identifies their contents.
	Files []string
	Hash  string
}

//go:embed catalog.json
var builtin []byte

var (
	cache   sync.Map // key: joined file names and contents → *Catalog
	loadMu  sync.Mutex
	rootsMu sync.Mutex
	roots   = map[string]string{} // directory → module root
)

// Load returns the built-in catalogue extended by the project's: oncelint.json in the
// module root above dir, if there is one, then the named files (a relative name resolves
// from that root).
func Load(dir string, names ...string) (*Catalog, error) {
	root := ModuleRoot(dir)
	var paths []string
	if p := filepath.Join(root, "oncelint.json"); root != "" && exists(p) {
		paths = append(paths, p)
	}
	for _, n := range names {
		if n == "" {
			continue
		}
		if !filepath.IsAbs(n) && root != "" {
			n = filepath.Join(root, n)
		}
		paths = append(paths, n)
	}
	datas := [][]byte{builtin}
	var key bytes.Buffer
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			return nil, fmt.Errorf("catalogue: %w", err)
		}
		datas = append(datas, b)
		fmt.Fprintf(&key, "%s\x00%s\x00", p, b)
	}
	if c, ok := cache.Load(key.String()); ok {
		return c.(*Catalog), nil
	}
	loadMu.Lock()
	defer loadMu.Unlock()
	c := &Catalog{funcs: map[string]*Effect{}, readFuncs: map[string]bool{}, transports: map[string]*Transport{},
		requests: map[string]*Request{}, retries: map[string]*Retry{}, unstable: map[string]string{},
		rootFuncs: map[string]*Root{}, rootSigs: map[string]*Root{}, embeds: map[string]*Root{},
		registrars: map[string]*Root{}, delivers: map[string]*Root{}, pkgs: map[string]bool{}, Files: paths}
	for i, name := range append([]string{"catalog.json (built in)"}, paths...) {
		if err := c.add(name, datas[i]); err != nil {
			return nil, err
		}
	}
	c.Hash = fmt.Sprintf("%x", sha256.Sum256(key.Bytes()))
	cache.Store(key.String(), c)
	return c, nil
}

// Default returns the built-in catalogue alone.
func Default() (*Catalog, error) { return Load("") }

// ModuleRoot returns the directory holding the go.mod above dir, or "".
func ModuleRoot(dir string) string {
	if dir == "" {
		return ""
	}
	rootsMu.Lock()
	defer rootsMu.Unlock()
	if r, ok := roots[dir]; ok {
		return r
	}
	r := ""
	// Up to the file system's root, the one directory that is its own parent.
	for d, prev := dir, ""; r == "" && d != prev; d, prev = filepath.Dir(d), d {
		if exists(filepath.Join(d, "go.mod")) {
			r = d
		}
	}
	roots[dir] = r
	return r
}

func exists(p string) bool { _, err := os.Stat(p); return err == nil }

// add parses one file and adds its entries, checking each so that a typo in a project's
// file is an error naming the entry rather than a rule that silently never fires.
func (c *Catalog) add(name string, data []byte) error {
	var f file
	dec := json.NewDecoder(bytes.NewReader(data))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return fmt.Errorf("catalogue %s: %w", name, err)
	}
	// The first problem found is the error; what is filed after it is dropped with c.
	var err error
	bad := func(list string, i int, what, format string, args ...any) {
		if err == nil {
			err = fmt.Errorf("catalogue %s: %s %d (%s): %s", name, list, i+1, what, fmt.Sprintf(format, args...))
		}
	}
	fn := func(list string, i int, full string) {
		if pkg, ok := funcPackage(full); !ok {
			bad(list, i, full, "not a full function name like pkg/path.Func or (*pkg/path.Type).Method")
		} else if list != "unstable" {
			c.pkgs[Normalize(pkg)] = true
		}
	}
	for i, e := range f.Effects {
		what := e.Func + e.URL + e.Path
		switch {
		case e.Effect == "":
			bad("effect", i, what, "effect is empty")
		case !slices.Contains(Classes, e.Class):
			bad("effect", i, what, "class %q is not one of %s", e.Class, strings.Join(Classes, ", "))
		case e.Key != nil && e.Key.Field == "" && e.Key.Setter == "" && len(e.Key.HeaderNames()) == 0:
			bad("effect", i, what, "key names no field, setter or header")
		case (e.Func != "") == (e.URL+e.Path != ""):
			bad("effect", i, what, "set func, or url and/or path")
		case e.URL != "" && !strings.Contains(e.URL, "://"), e.Path != "" && !strings.HasPrefix(e.Path, "/"):
			bad("effect", i, what, "url must be absolute and path must start with /")
		}
		if e.Func != "" {
			fn("effect", i, e.Func)
			put(c.funcs, e.Func, &e)
		} else {
			c.urls = append(c.urls, &e)
		}
	}
	for i, r := range f.Reads {
		switch {
		case (r.Func != "") == (r.URL+r.Path != ""):
			bad("read", i, r.Func+r.URL+r.Path, "set func, or url and/or path")
		case r.Func != "":
			fn("read", i, r.Func)
			put(c.readFuncs, r.Func, true)
		default:
			c.readURLs = append(c.readURLs, &r)
		}
	}
	for i, t := range f.Transports {
		if (t.URL == nil) == (t.Request == nil) {
			bad("transport", i, t.Func, "set url (with method) or request")
		}
		fn("transport", i, t.Func)
		t.Method = strings.ToUpper(t.Method)
		put(c.transports, t.Func, &t)
	}
	for i, r := range f.Requests {
		fn("request", i, r.Func)
		put(c.requests, r.Func, &r)
	}
	for i, r := range f.Retries {
		fn("retry", i, r.Func)
		put(c.retries, r.Func, &r)
	}
	for i, u := range f.Unstable {
		if u.Source != "clock" && u.Source != "random" {
			bad("unstable", i, u.Func, "source %q is not clock or random", u.Source)
		}
		full := strings.TrimSuffix(u.Func, ".*")
		if full != u.Func {
			full += ".X"
		}
		fn("unstable", i, full)
		put(c.unstable, u.Func, u.Source)
	}
	for i, r := range f.Roots {
		named := []string{r.Signature, r.Func, r.Embeds, r.Registrar, r.Delivers}
		switch {
		case len(slices.DeleteFunc(named, func(s string) bool { return s == "" })) != 1:
			bad("root", i, r.Root, "set exactly one of signature, func, embeds, registrar and delivers")
		case r.Root == "":
			bad("root", i, r.Func+r.Signature, "root is empty: say what runs the code again")
		case strings.HasSuffix(r.Signature, ", ...)"):
			c.rootLeads = append(c.rootLeads, &r)
		case r.Signature != "":
			put(c.rootSigs, r.Signature, &r)
		case r.Func != "":
			fn("root", i, r.Func)
			put(c.rootFuncs, r.Func, &r)
		case r.Embeds != "":
			put(c.embeds, r.Embeds, &r)
		case r.Delivers != "":
			fn("root", i, r.Delivers)
			put(c.delivers, r.Delivers, &r)
		default:
			put(c.registrars, r.Registrar, &r)
		}
	}
	return err
}

// put files v under the exact name (a pointer receiver's star aside) and, unless another
// major version's entry holds it, under the version-less name too.
func put[T any](m map[string]T, full string, v T) {
	m[unstar(full)] = v
	if _, ok := m["~"+Normalize(full)]; !ok {
		m["~"+Normalize(full)] = v
	}
}

// get finds the entry of the exact name, else of the version-less one, else returns the
// zero value.
func get[T any](m map[string]T, full string) T {
	if v, ok := m[unstar(full)]; ok {
		return v
	}
	return m["~"+Normalize(full)]
}

// unstar drops a pointer receiver's star: "(*T).M" and "(T).M" name one method.
func unstar(name string) string {
	if strings.HasPrefix(name, "(*") {
		return "(" + name[2:]
	}
	return name
}

// funcPackage returns the package path of a full function name. The name is the last
// dot-separated element (a package path may hold dots of its own: github.com/satori/go.uuid).
func funcPackage(full string) (string, bool) {
	s := full
	if strings.HasPrefix(s, "(") {
		end := strings.Index(s, ")")
		if end < 0 || !strings.HasPrefix(s[end:], ").") || end+2 == len(s) {
			return "", false
		}
		s = strings.TrimPrefix(s[1:end], "*")
	}
	dot := strings.LastIndex(s, ".")
	if dot <= strings.LastIndex(s, "/")+1 || dot == len(s)-1 {
		return "", false
	}
	return s[:dot], true
}

var majorVersion = regexp.MustCompile(`/v[0-9]+([/.)\] ,]|$)`)

// Normalize drops major-version path elements and pointer receivers' stars from a full
// name, package path or signature, so entries for one major version match every other,
// and (T).M and (*T).M name the same method (a type cannot declare a method twice).
func Normalize(name string) string {
	name = unstar(name)
	for {
		n := majorVersion.ReplaceAllString(name, "$1")
		if n == name {
			return n
		}
		name = n
	}
}

// Effect returns the entry for the function of the full name.
func (c *Catalog) Effect(fullName string) (*Effect, bool) {
	e := get(c.funcs, fullName)
	return e, e != nil
}

// EndpointEffect returns the effect entry matching a request to a URL made of the
// constant parts given (the first is its start when lead is set).
func (c *Catalog) EndpointEffect(parts []string, lead bool) *Effect {
	if i := slices.IndexFunc(c.urls, func(e *Effect) bool { return matchURL(e.URL, e.Path, parts, lead) }); i >= 0 {
		return c.urls[i]
	}
	return nil
}

// IsRead reports whether the function of the full name only reads.
func (c *Catalog) IsRead(fullName string) bool { return get(c.readFuncs, fullName) }

// ReadURL reports whether a request to a URL made of the constant parts goes to an
// endpoint listed as a read.
func (c *Catalog) ReadURL(parts []string, lead bool) bool {
	return slices.ContainsFunc(c.readURLs, func(r *Read) bool { return matchURL(r.URL, r.Path, parts, lead) })
}

// matchURL reports whether the URL's start begins with prefix (when given) and one of its
// constant parts ends with path (when given), before any query.
func matchURL(prefix, path string, parts []string, lead bool) bool {
	if prefix != "" && (!lead || len(parts) == 0 || !strings.HasPrefix(parts[0], prefix)) {
		return false
	}
	return path == "" || slices.ContainsFunc(parts, func(p string) bool {
		return strings.HasSuffix(strings.TrimSuffix(strings.Split(p, "?")[0], "/"), path)
	})
}

// Knows reports whether an effect, a read, a transport, a retry helper or a root names the
// function.
func (c *Catalog) Knows(fullName string) bool {
	_, effect := c.Effect(fullName)
	return effect || c.IsRead(fullName) || c.Transport(fullName) != nil || c.Retry(fullName) != nil || c.RootFunc(fullName) != nil || c.Delivers(fullName) != nil
}

// Transport returns the entry of a function that sends requests.
func (c *Catalog) Transport(fullName string) *Transport { return get(c.transports, fullName) }

// Request returns the entry of a function that builds a request.
func (c *Catalog) Request(fullName string) *Request { return get(c.requests, fullName) }

// Retry returns the entry of a retry helper.
func (c *Catalog) Retry(fullName string) *Retry { return get(c.retries, fullName) }

// Unstable returns "clock" or "random" for a function whose result differs on every call,
// or "". pkgPath is the function's package, for entries of the form "pkg.*".
func (c *Catalog) Unstable(fullName, pkgPath string) string {
	return cmp.Or(get(c.unstable, fullName), get(c.unstable, pkgPath+".*"))
}

// RootFunc returns the root entry of a function: one whose function-valued argument is
// run again (Arg set), or which is run again itself.
func (c *Catalog) RootFunc(fullName string) *Root { return get(c.rootFuncs, fullName) }

// RootSignature returns the root entry of a function type, written as
// [SignatureString] writes it.
// An entry ending in ", ...)" names the leading parameters only: any further parameters and
// any results match it (a handler that also takes the app's own value and returns an error).
func (c *Catalog) RootSignature(sig string) *Root {
	if r := get(c.rootSigs, sig); r != nil {
		return r
	}
	for _, r := range c.rootLeads {
		lead := strings.TrimSuffix(r.Signature, ", ...)")
		if rest, ok := strings.CutPrefix(sig, lead); ok && (strings.HasPrefix(rest, ", ") || strings.HasPrefix(rest, ")")) {
			return r
		}
	}
	return nil
}

// Embedded returns the root entry of a framework type whose embedders' methods are run.
func (c *Catalog) Embedded(typeName string) *Root { return get(c.embeds, typeName) }

// Registrar returns the root entry of a parameter type after which a service is registered.
func (c *Catalog) Registrar(typeName string) *Root { return get(c.registrars, typeName) }

// Delivers returns the root entry of a function that hands its caller a message the sender
// delivers again until it is acknowledged.
func (c *Catalog) Delivers(fullName string) *Root { return get(c.delivers, fullName) }

// Names reports whether an entry other than an unstable source names a function of the
// package, so an analyzer can skip packages that use none (the clock alone makes no
// effect and no key).
func (c *Catalog) Names(pkgPath string) bool { return c.pkgs[Normalize(pkgPath)] }

// KeyHeaders returns the lower-case names of the headers that carry catalogued keys.
func (c *Catalog) KeyHeaders() map[string]bool {
	out := map[string]bool{}
	for _, e := range c.Effects() {
		if e.Key != nil {
			for _, h := range e.Key.HeaderNames() {
				out[strings.ToLower(h)] = true
			}
		}
	}
	return out
}

// Effects returns every effect entry, functions first, sorted.
func (c *Catalog) Effects() []*Effect {
	out := make([]*Effect, 0, len(c.funcs)+len(c.urls))
	for k, e := range c.funcs {
		if !strings.HasPrefix(k, "~") {
			out = append(out, e)
		}
	}
	slices.SortFunc(out, func(a, b *Effect) int { return cmp.Compare(a.Func, b.Func) })
	return append(out, c.urls...)
}
