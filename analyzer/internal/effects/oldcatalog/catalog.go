package oldcatalog

import (
	_ "embed"
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"unicode"
)

// Classes an effect may have.
const (
	Payment = "payment"
	Email   = "email"
	Message = "message"
	Model   = "model"
	HTTP    = "http"
)

// Effect is one function or method that does something a retry must not repeat.
type Effect struct {
	// Func is the full name of the function, as types.Func.FullName prints it.
	Func string `json:"func"`
	// Effect completes "a retry ... again": "charges the card".
	Effect string `json:"effect"`
	// Class is payment, email, message, model or http.
	Class string `json:"class"`
	// Key says how a call carries the provider's idempotency key; nil where the provider
	// takes none, so only a //once: promise can guard the call.
	Key *Key `json:"key,omitempty"`
	// Request, if set, makes the call an effect only for requests built with one of its
	// methods.
	Request *Request `json:"request,omitempty"`
	// URL, if set, is the index of the argument holding the URL the call sends to, so a
	// request to a URL the catalogue lists as a read is no effect.
	URL *int `json:"url,omitempty"`
}

// Read names something that looks like an effect but changes nothing that lasts: an
// OAuth token exchange, a captcha or signature verification, a search POSTed for its
// body's size. Exactly one of Func, URL, Path, Marker, Name and Word is set.
type Read struct {
	// Func is the full name of a function whose calls are no effect, and whose own body
	// (when it is the application's) gives its callers none.
	Func string `json:"func,omitempty"`
	// URL is a URL prefix: a request whose URL starts with it is no effect.
	URL string `json:"url,omitempty"`
	// Path is a URL path: a request whose URL's constant part ends with it is no effect,
	// whatever the host (an issuer's token endpoint is often built from configuration).
	Path string `json:"path,omitempty"`
	// Marker is a parameter name that marks a request as a read wherever its URL comes
	// from: a request sent by a function holding the string constant Marker (or
	// Marker followed by "=") is no effect. "grant_type" marks an OAuth 2.0 token request,
	// whose endpoint usually comes from configuration.
	Marker string `json:"marker,omitempty"`
	// Name is the first word of the names of functions that check something: a raw
	// HTTP request sent by a function of the application whose name starts with it
	// ("verify" matches verifyCaptcha and VerifyOTP, not verifier) is a check, no
	// effect. It applies to requests only, never to a catalogued provider call.
	Name string `json:"name,omitempty"`
	// Word is a word that names, anywhere in a function's name, a purpose whose request
	// leaves nothing a repeat could add to ("logout" matches callProviderLogoutURL and
	// endSessionLogout, not logouts): ending a session or revoking a token twice leaves
	// it ended. Like Name, it applies to the application's raw HTTP requests only.
	Word string `json:"word,omitempty"`
	// Why says what the endpoint or function does, for the reader of the catalogue.
	Why string `json:"why"`
}

// Key is how a call carries an idempotency key.
type Key struct {
	// Arg is the index of the argument holding Field (the receiver is not counted).
	Arg int `json:"arg"`
	// Field is the struct field holding the key, at any depth of embedding.
	Field string `json:"field,omitempty"`
	// Setter is a method of the argument that sets the key.
	Setter string `json:"setter,omitempty"`
	// Header is a request header holding the key.
	Header string `json:"header,omitempty"`
	// Headers are other names the receiver reads the same key under: Standard Webhooks'
	// webhook-id, which a receiver deduplicates deliveries by.
	Headers []string `json:"headers,omitempty"`
}

// HeaderNames returns every header name the key may be sent under.
func (k *Key) HeaderNames() []string {
	if k.Header == "" {
		return k.Headers
	}
	return append([]string{k.Header}, k.Headers...)
}

// Request limits an effect to requests sent with some methods.
type Request struct {
	// Arg is the index of the *http.Request argument.
	Arg int `json:"arg"`
	// Methods are the HTTP methods that make the call an effect, in upper case.
	Methods []string `json:"methods"`
}

// Unstable names a function whose result differs on every call.
type Unstable struct {
	// Func is the function's full name, or a package path followed by ".*".
	Func string `json:"func"`
}

// file is the JSON form of a catalogue file.
type file struct {
	Effects  []Effect   `json:"effects"`
	Reads    []Read     `json:"reads,omitempty"`
	Unstable []Unstable `json:"unstable"`
}

// Catalog is a lookup table of effects and unstable sources. A Catalog is not modified
// after it is built, so it is safe for concurrent use.
type Catalog struct {
	effects  map[string]*Effect
	unstable map[string]bool
	// readFuncs are the functions of the reads; readURLs and readPaths their URLs and
	// paths.
	readFuncs                                  map[string]bool
	readURLs, readPaths, markers, names, words []string
	// pkgs and unstablePkgs hold the (version-less) package paths of the entries, for
	// the analyzers' fast paths; modules the modules of the effects' packages.
	pkgs, unstablePkgs, modules map[string]bool
}

//go:embed providers.json
var builtin []byte

var (
	defaultOnce sync.Once
	defaultCat  *Catalog
	defaultErr  error
)

// Default returns the built-in catalogue.
func Default() (*Catalog, error) {
	defaultOnce.Do(func() {
		defaultCat = newCatalog()
		defaultErr = defaultCat.add("providers.json (built in)", builtin)
	})
	return defaultCat, defaultErr
}

// Load returns the built-in catalogue extended with the entries of the named files. A
// relative name is resolved against dir (oncelint passes the module root, so a name in
// go vet's settings means the same file from every package directory).
func Load(dir string, names ...string) (*Catalog, error) {
	def, err := Default()
	if err != nil {
		return nil, err
	}
	if len(names) == 0 {
		return def, nil
	}
	c := def.clone()
	for _, name := range names {
		if !filepath.IsAbs(name) {
			name = filepath.Join(dir, name)
		}
		data, err := os.ReadFile(name)
		if err != nil {
			return nil, fmt.Errorf("catalogue: %w", err)
		}
		if err := c.add(name, data); err != nil {
			return nil, err
		}
	}
	return c, nil
}

func (c *Catalog) clone() *Catalog {
	n := newCatalog()
	for k, v := range c.effects {
		n.effects[k] = v
	}
	for k, v := range c.unstable {
		n.unstable[k] = v
	}
	for k, v := range c.pkgs {
		n.pkgs[k] = v
	}
	for k, v := range c.unstablePkgs {
		n.unstablePkgs[k] = v
	}
	for k, v := range c.modules {
		n.modules[k] = v
	}
	for k, v := range c.readFuncs {
		n.readFuncs[k] = v
	}
	n.readURLs = append(n.readURLs, c.readURLs...)
	n.readPaths = append(n.readPaths, c.readPaths...)
	n.markers = append(n.markers, c.markers...)
	n.names = append(n.names, c.names...)
	n.words = append(n.words, c.words...)
	return n
}

func newCatalog() *Catalog {
	return &Catalog{effects: map[string]*Effect{}, unstable: map[string]bool{}, pkgs: map[string]bool{}, unstablePkgs: map[string]bool{}, modules: map[string]bool{}, readFuncs: map[string]bool{}}
}

var classes = map[string]bool{Payment: true, Email: true, Message: true, Model: true, HTTP: true}

// add parses one catalogue file and adds its entries, checking each so that a typo in a
// user's file is an error naming the entry rather than a rule that silently never fires.
func (c *Catalog) add(name string, data []byte) error {
	var f file
	dec := json.NewDecoder(strings.NewReader(string(data)))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&f); err != nil {
		return fmt.Errorf("catalogue %s: %w", name, err)
	}
	for i := range f.Effects {
		e := f.Effects[i]
		bad := func(format string, args ...any) error {
			return fmt.Errorf("catalogue %s: effect %d (%q): %s", name, i+1, e.Func, fmt.Sprintf(format, args...))
		}
		pkg, ok := funcPackage(e.Func)
		switch {
		case !ok:
			return bad("func is not a full function name like pkg/path.Func or (*pkg/path.Type).Method")
		case e.Effect == "":
			return bad("effect is empty")
		case !classes[e.Class]:
			return bad("class %q is not one of payment, email, message, model, http", e.Class)
		case e.Key != nil && e.Key.Field == "" && e.Key.Setter == "" && len(e.Key.HeaderNames()) == 0:
			return bad("key names no field, setter or header")
		case e.Key != nil && e.Key.Arg < 0, e.Request != nil && e.Request.Arg < 0, e.URL != nil && *e.URL < 0:
			return bad("negative argument index")
		case e.Request != nil && len(e.Request.Methods) == 0:
			return bad("request lists no methods")
		}
		if e.Request != nil {
			for j, m := range e.Request.Methods {
				e.Request.Methods[j] = strings.ToUpper(m)
			}
		}
		c.effects[Normalize(e.Func)] = &e
		c.pkgs[Normalize(pkg)] = true
		c.modules[Module(Normalize(pkg))] = true
	}
	for i, r := range f.Reads {
		set := 0
		for _, v := range []string{r.Func, r.URL, r.Path, r.Marker, r.Name, r.Word} {
			if v != "" {
				set++
			}
		}
		switch {
		case set != 1:
			return fmt.Errorf("catalogue %s: read %d: set exactly one of func, url, path, marker, name and word", name, i+1)
		case r.Func != "":
			if _, ok := funcPackage(r.Func); !ok {
				return fmt.Errorf("catalogue %s: read %d (%q): func is not a full function name", name, i+1, r.Func)
			}
			c.readFuncs[Normalize(r.Func)] = true
		case r.URL != "":
			if !strings.Contains(r.URL, "://") {
				return fmt.Errorf("catalogue %s: read %d (%q): url is not an absolute URL", name, i+1, r.URL)
			}
			c.readURLs = append(c.readURLs, r.URL)
		case r.Marker != "":
			c.markers = append(c.markers, r.Marker)
		case r.Name != "":
			c.names = append(c.names, strings.ToLower(r.Name))
		case r.Word != "":
			c.words = append(c.words, strings.ToLower(r.Word))
		default:
			if !strings.HasPrefix(r.Path, "/") {
				return fmt.Errorf("catalogue %s: read %d (%q): path does not start with /", name, i+1, r.Path)
			}
			c.readPaths = append(c.readPaths, r.Path)
		}
	}
	for i, u := range f.Unstable {
		pkg, ok := funcPackage(u.Func)
		if !ok {
			return fmt.Errorf("catalogue %s: unstable %d (%q): func is not a full function name", name, i+1, u.Func)
		}
		c.unstable[Normalize(u.Func)] = true
		c.unstablePkgs[Normalize(pkg)] = true
	}
	return nil
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

var majorVersion = regexp.MustCompile(`/v[0-9]+([/.)]|$)`)

// Normalize drops major-version path elements from a full name or package path, so
// entries for one major version of a module match every other. It also drops a pointer
// receiver's star: a type cannot declare one method twice, so (T).M and (*T).M name the
// same method, and an entry matches whichever receiver the SDK declares it with (stripe's
// old-style charge.Client.New has a value receiver; FullName prints no star for it).
func Normalize(name string) string {
	if strings.HasPrefix(name, "(*") {
		name = "(" + name[2:]
	}
	for {
		n := majorVersion.ReplaceAllString(name, "$1")
		if n == name {
			return n
		}
		name = n
	}
}

// Effect returns the entry for the function of the full name, if it has one.
func (c *Catalog) Effect(fullName string) (*Effect, bool) {
	e, ok := c.effects[Normalize(fullName)]
	return e, ok
}

// IsRead reports whether the function of the full name is listed as a read: its calls
// are no effect.
func (c *Catalog) IsRead(fullName string) bool { return c.readFuncs[Normalize(fullName)] }

// ReadURL reports whether a request to a URL made of the constant parts given (in order;
// the first is its start when lead is set) goes to an endpoint listed as a read: the start
// begins with a read URL, or a part ends with a read path (before any query).
func (c *Catalog) ReadURL(parts []string, lead bool) bool {
	for i, p := range parts {
		if i == 0 && lead {
			for _, u := range c.readURLs {
				if strings.HasPrefix(p, u) {
					return true
				}
			}
		}
		if q := strings.IndexByte(p, '?'); q >= 0 {
			p = p[:q]
		}
		p = strings.TrimSuffix(p, "/")
		for _, path := range c.readPaths {
			if strings.HasSuffix(p, path) {
				return true
			}
		}
	}
	return false
}

// ReadMarker reports whether a string constant of the function sending a request marks
// the request as a read.
func (c *Catalog) ReadMarker(s string) bool {
	for _, m := range c.markers {
		if s == m || strings.Contains(s, m+"=") {
			return true
		}
	}
	return false
}

// CheckName reports whether a function of the name is named for a check or a read (its
// first word is a read's Name) or for a purpose with no lasting effect (a read's Word is
// one of its words), so its raw HTTP requests are no effects. A name that also says it
// writes (getOrCreate, fetchAndSend: one of writeWords) is not.
func (c *Catalog) CheckName(fn string) bool {
	words := NameWords(fn)
	if len(words) == 0 {
		return false
	}
	for _, w := range words[1:] {
		if slices.Contains(writeWords, w) {
			return false
		}
	}
	if slices.Contains(c.names, words[0]) {
		return true
	}
	for _, w := range words {
		if slices.Contains(c.words, w) {
			return true
		}
	}
	return false
}

// RedoName reports whether a function's name says it does again, on purpose, what was
// done before: its first word is "re" (reOCRPage, reSendCode) or one of redoWords
// (resendInvite, regenerateAnswer, reprocessDocument). A request to redo asks for the
// repeat: the effect it makes again is what it is for. A retry (retryPayment) is not
// one: a retried charge repeats what should happen once; nor is a name with a word of
// money in it (reCharge, reOrder, reprocessPayment).
func RedoName(fn string) bool {
	words := NameWords(fn)
	if len(words) == 0 || !slices.Contains(redoWords, words[0]) || words[0] == "re" && len(words) == 1 {
		return false
	}
	for _, w := range words[1:] {
		if slices.Contains(moneyWords, w) {
			return false // a payment is never repeated by design (reCharge, reOrder)
		}
	}
	return true
}

// StoreName reports whether a function's name says it keeps something: its first word
// is one of storeWords (addMessage, saveResult, a cache's Set).
func StoreName(fn string) bool {
	words := NameWords(fn)
	return len(words) > 0 && slices.Contains(storeWords, words[0])
}

// storeWords are the first words of a name that say the function keeps something. Not
// write: a handler writes its answer to the response (Response.Write) and keeps nothing.
var storeWords = []string{"add", "create", "insert", "update", "upsert", "save", "store", "delete", "remove", "set", "put", "record", "persist", "increment", "decrement", "consume", "deduct"}

// moneyWords are the words that name moving money or placing an order.
var moneyWords = []string{"charge", "pay", "payment", "buy", "order", "refund", "transfer", "capture", "invoice", "purchase"}

// redoWords are the first words that name a deliberate repeat.
var redoWords = []string{"re", "resend", "regenerate", "regen", "redo", "rerun", "reprocess", "reanalyze", "reanalyse", "rescan", "reindex", "recompute"}

// WriteName reports whether a function's name says it creates or sends something: one
// of its words is one of writeWords (createCustomer, notifyFailure, sendInvite).
func WriteName(fn string) bool {
	for _, w := range NameWords(fn) {
		if slices.Contains(writeWords, w) {
			return true
		}
	}
	return false
}

// writeWords are the words that, anywhere after the first in a function's name, say it
// creates or sends something whatever its first word says.
var writeWords = []string{"create", "add", "insert", "new", "send", "post", "submit", "upload", "charge", "pay", "buy", "order", "notify", "publish", "capture", "refund", "transfer", "finalize", "reserve"}

// NameWords splits an identifier into its lower-case words at camel-case and underscore
// boundaries: "callProviderLogoutURL" is call, provider, logout, url; "getHTTPClient" is
// get, http, client.
func NameWords(name string) []string {
	var words []string
	rs := []rune(name)
	start := 0
	flush := func(end int) {
		if end > start {
			words = append(words, strings.ToLower(string(rs[start:end])))
		}
		start = end
	}
	for i := 0; i < len(rs); i++ {
		r := rs[i]
		switch {
		case r == '_':
			flush(i)
			start = i + 1
		case i > start && unicode.IsUpper(r) && (!unicode.IsUpper(rs[i-1]) || i+1 < len(rs) && unicode.IsLower(rs[i+1])):
			flush(i)
		case i > start && unicode.IsDigit(r) != unicode.IsDigit(rs[i-1]):
			flush(i)
		}
	}
	flush(len(rs))
	return words
}

// IsUnstable reports whether the function of the full name returns a value that differs
// on every call. pkgPath is the function's package path, for entries of the form "pkg.*".
func (c *Catalog) IsUnstable(fullName, pkgPath string) bool {
	return c.unstable[Normalize(fullName)] || c.unstable[Normalize(pkgPath)+".*"]
}

// HasEffects reports whether any effect entry is a function of the package, so an
// analyzer can skip packages that import none of them.
func (c *Catalog) HasEffects(path string) bool { return c.pkgs[Normalize(path)] }

// FromProvider reports whether the package belongs to the module of a catalogued effect:
// an SDK's package, whose types (stripe.Params, resend.SendEmailOptions) carry its keys.
func (c *Catalog) FromProvider(path string) bool { return c.modules[Module(Normalize(path))] }

// Module approximates the module of a package path by its first three elements
// (host/owner/repo), enough to tell an SDK's packages from an application's.
func Module(path string) string {
	parts := strings.SplitN(path, "/", 4)
	return strings.Join(parts[:min(len(parts), 3)], "/")
}

// HasUnstable reports whether any unstable entry is a function of the package.
func (c *Catalog) HasUnstable(path string) bool { return c.unstablePkgs[Normalize(path)] }

// KeyFields returns the field and setter names through which catalogued effects take
// their keys, and the headers that carry them.
func (c *Catalog) KeyFields() (fields, setters, headers map[string]bool) {
	fields, setters, headers = map[string]bool{}, map[string]bool{}, map[string]bool{}
	for _, e := range c.effects {
		if e.Key == nil {
			continue
		}
		if e.Key.Field != "" {
			fields[e.Key.Field] = true
		}
		if e.Key.Setter != "" {
			setters[e.Key.Setter] = true
		}
		for _, h := range e.Key.HeaderNames() {
			headers[strings.ToLower(h)] = true
		}
	}
	return fields, setters, headers
}

// Effects returns every effect entry, sorted by name.
func (c *Catalog) Effects() []*Effect {
	out := make([]*Effect, 0, len(c.effects))
	for _, e := range c.effects {
		out = append(out, e)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].Func < out[j].Func })
	return out
}
