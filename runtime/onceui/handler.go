package onceui

import (
	"crypto/rand"
	"embed"
	"errors"
	"fmt"
	"html/template"
	"log"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"github.com/jackc/pgx/v5"

	once "github.com/oncekit/once/runtime"
	"github.com/oncekit/once/runtime/internal/dbcall"
	"github.com/oncekit/once/runtime/onceops"
)

// Config says what a console shows and who acts through it.
type Config struct {
	// DB is the database holding once's schema (a *pgxpool.Pool). Required.
	DB once.DB
	// ReadOnly refuses every action: the pages show, nothing changes.
	ReadOnly bool
	// User returns the acting user of r, as the app's authentication knows it: the audit
	// row's actor. An action whose user is "" is refused. Required unless ReadOnly.
	User func(r *http.Request) string
	// BasePath is the path the handler is mounted at ("/admin/once"; "" for the root),
	// without a trailing slash. Links and redirects are made under it.
	BasePath string
	// Secret signs the CSRF tokens; nil draws one at random (tokens then last as long as
	// the process). Give every instance behind one load balancer the same.
	Secret []byte
	// Log receives the database errors a page or action met; nil means log.Default.
	Log *log.Logger
}

// querier is what the pages read with.
type querier = once.DB

type handler struct {
	db       once.DB
	readOnly bool
	user     func(*http.Request) string
	base     string
	secret   []byte
	log      *log.Logger
	pages    map[string]*template.Template
	mux      *http.ServeMux
}

//go:embed templates/*.html templates/style.css
var files embed.FS

// New returns the console's handler.
func New(c Config) (http.Handler, error) {
	if c.DB == nil {
		return nil, errors.New("onceui: no database")
	}
	if c.User == nil && !c.ReadOnly {
		return nil, errors.New("onceui: no User function: actions need to know who acts (or set ReadOnly)")
	}
	if c.BasePath != "" && (!strings.HasPrefix(c.BasePath, "/") || strings.HasSuffix(c.BasePath, "/")) {
		return nil, fmt.Errorf("onceui: base path %q must start with / and not end with one", c.BasePath)
	}
	h := &handler{db: c.DB, readOnly: c.ReadOnly, user: c.User, base: c.BasePath, secret: c.Secret, log: c.Log}
	if h.secret == nil {
		h.secret = make([]byte, 32)
		rand.Read(h.secret)
	}
	if h.log == nil {
		h.log = log.Default()
	}
	funcs := template.FuncMap{
		"u":      func(p string) string { return h.base + p },
		"ago":    ago,
		"at":     func(t time.Time) string { return t.UTC().Format("2006-01-02 15:04:05Z") },
		"result": shownResult,
		"json":   func(b []byte) string { return string(b) },
		"q":      url.QueryEscape,
		"chart":  chart,
		"first": func(v []string) string {
			if len(v) == 0 {
				return ""
			}
			return v[0]
		},
		"form": actionForm,
	}
	h.pages = map[string]*template.Template{}
	for _, p := range []string{"overview", "uncertain", "operation", "claims", "latches", "allowances", "leases", "followups", "audit", "error"} {
		t, err := template.New("layout.html").Funcs(funcs).ParseFS(files, "templates/layout.html", "templates/"+p+".html")
		if err != nil {
			return nil, fmt.Errorf("onceui: page %s: %w", p, err)
		}
		h.pages[p] = t
	}
	m := http.NewServeMux()
	m.HandleFunc("GET /{$}", h.overview)
	m.HandleFunc("GET /uncertain", h.uncertain)
	m.HandleFunc("GET /operation", h.operation)
	m.HandleFunc("GET /claims", h.claims)
	m.HandleFunc("GET /latches", h.latches)
	m.HandleFunc("GET /allowances", h.allowances)
	m.HandleFunc("GET /leases", h.leases)
	m.HandleFunc("GET /followups", h.followups)
	m.HandleFunc("GET /audit", h.audit)
	m.HandleFunc("GET /style.css", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/css; charset=utf-8")
		w.Header().Set("Cache-Control", "max-age=3600")
		b, _ := files.ReadFile("templates/style.css")
		w.Write(b)
	})
	m.HandleFunc("POST /act/{action}", h.act)
	h.mux = m
	return h, nil
}

func (h *handler) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	w.Header().Set("X-Frame-Options", "DENY")
	w.Header().Set("X-Content-Type-Options", "nosniff")
	w.Header().Set("Referrer-Policy", "same-origin")
	w.Header().Set("Content-Security-Policy", "default-src 'none'; style-src 'self'; img-src 'self'; form-action 'self'; frame-ancestors 'none'")
	p := r.URL.Path
	if h.base != "" {
		rest, ok := strings.CutPrefix(p, h.base)
		if !ok || (rest != "" && rest[0] != '/') {
			http.NotFound(w, r)
			return
		}
		if rest == "" {
			http.Redirect(w, r, h.base+"/", http.StatusFound)
			return
		}
		r2 := new(http.Request)
		*r2 = *r
		u := *r.URL
		u.Path, u.RawPath = rest, ""
		r2.URL = &u
		r = r2
	}
	h.mux.ServeHTTP(w, r)
}

// page is what every template gets.
type page struct {
	Title    string
	Nav      string
	CSRF     string
	ReadOnly bool
	User     string
	Query    url.Values
	Data     any
	Next     string // the next page's query, "" on the last
	Back     string // the request's path and query, to come back to after an action
}

func (h *handler) render(w http.ResponseWriter, r *http.Request, name string, status int, p page) {
	p.CSRF = h.csrfToken(w, r)
	p.ReadOnly = h.readOnly
	if h.user != nil {
		p.User = h.user(r)
	}
	p.Query = r.URL.Query()
	p.Back = h.base + r.URL.Path
	if r.URL.RawQuery != "" {
		p.Back += "?" + r.URL.RawQuery
	}
	if p.Nav == "" {
		p.Nav = name
	}
	var b strings.Builder
	if err := h.pages[name].Execute(&b, p); err != nil {
		h.log.Printf("onceui: rendering %s: %v", name, err)
		http.Error(w, "onceui: the page could not be rendered", http.StatusInternalServerError)
		return
	}
	w.Header().Set("Content-Type", "text/html; charset=utf-8")
	w.Header().Set("Cache-Control", "no-store")
	w.WriteHeader(status)
	fmt.Fprint(w, b.String())
}

// fail renders the error page with msg (user data: escaped by the template).
func (h *handler) fail(w http.ResponseWriter, r *http.Request, status int, msg string) {
	h.render(w, r, "error", status, page{Title: http.StatusText(status), Nav: "none", Data: msg})
}

// dbFail logs a database error and shows that the read failed.
func (h *handler) dbFail(w http.ResponseWriter, r *http.Request, what string, err error) {
	h.log.Printf("onceui: %s: %v", what, err)
	h.fail(w, r, http.StatusInternalServerError, what+" failed: the database did not answer (see the server's log)")
}

// ago says how long ago t was, to the second.
func ago(t time.Time) string {
	d := time.Since(t).Round(time.Second)
	if d < 0 {
		return "in " + (-d).String()
	}
	return d.String() + " ago"
}

// after returns the next page's query: q with after set to the keyset of the last row shown,
// when more rows than a page were found.
func nextQuery(q url.Values, more bool, after ...string) string {
	if !more {
		return ""
	}
	n := url.Values{}
	for k, v := range q {
		n[k] = v
	}
	n.Set("after", strings.Join(after, "\x1f"))
	return n.Encode()
}

// cursor splits the after= parameter into its n parts ("" each on the first page).
func cursor(r *http.Request, n int) []string {
	parts := strings.Split(r.URL.Query().Get("after"), "\x1f")
	if len(parts) != n {
		return make([]string, n)
	}
	return parts
}

// duration parses a window or age of the URL ("30m", "7d"); def when empty.
func duration(s string, def time.Duration) (time.Duration, error) {
	if s == "" {
		return def, nil
	}
	if d, ok := strings.CutSuffix(s, "d"); ok {
		n, err := strconv.Atoi(d)
		if err != nil || n < 0 || n > 3660 {
			return 0, fmt.Errorf("%q is not a number of days", s)
		}
		return time.Duration(n) * 24 * time.Hour, nil
	}
	d, err := time.ParseDuration(s)
	if err != nil || d < 0 {
		return 0, fmt.Errorf("%q is not a duration (30m, 6h, 7d)", s)
	}
	return d, nil
}

func (h *handler) overview(w http.ResponseWriter, r *http.Request) {
	window, err := duration(r.URL.Query().Get("window"), 7*24*time.Hour)
	if err != nil {
		h.fail(w, r, http.StatusBadRequest, "window: "+err.Error())
		return
	}
	rows, days, win, err := overview(r.Context(), h.db, window)
	if err != nil {
		h.dbFail(w, r, "the overview", err)
		return
	}
	h.render(w, r, "overview", http.StatusOK, page{Title: "Overview", Data: map[string]any{
		"Rows": rows, "Days": days, "Window": window, "Rolled": win,
		"AnsweredChart": chart(days, window, "duplicates answered per day", func(d dayCount) int64 { return d.Answered }),
		"DoneChart":     chart(days, window, "operations done per day", func(d dayCount) int64 { return d.Done })}})
}

func (h *handler) uncertain(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	age, err := duration(q.Get("age"), 0)
	if err != nil {
		h.fail(w, r, http.StatusBadRequest, "age: "+err.Error())
		return
	}
	c := cursor(r, 2)
	afterAt, afterID := time.Time{}, "00000000-0000-0000-0000-000000000000"
	if c[0] != "" {
		if afterAt, err = time.Parse(time.RFC3339Nano, c[0]); err != nil || !dbcall.IsUUID(c[1]) {
			h.fail(w, r, http.StatusBadRequest, "after: not a position in this list")
			return
		}
		afterID = c[1]
	}
	list, err := listUncertain(r.Context(), h.db, q.Get("name"), q.Get("scope"), age, afterAt, afterID)
	if err != nil {
		h.dbFail(w, r, "the uncertain operations", err)
		return
	}
	next := ""
	if len(list) > pageSize {
		list = list[:pageSize]
		last := list[len(list)-1]
		next = nextQuery(q, true, last.UncertainSince.Format(time.RFC3339Nano), last.ID)
	}
	h.render(w, r, "uncertain", http.StatusOK, page{Title: "Uncertain operations", Data: list, Next: next})
}

func (h *handler) operation(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	op, err := lookupOp(r.Context(), h.db, q.Get("name"), q.Get("scope"), q.Get("key"))
	if errors.Is(err, pgx.ErrNoRows) {
		h.fail(w, r, http.StatusNotFound, fmt.Sprintf("no operation %s %q in scope %q", q.Get("name"), q.Get("key"), q.Get("scope")))
		return
	}
	if err != nil {
		h.dbFail(w, r, "the operation", err)
		return
	}
	ledger, err := ledgerOf(r.Context(), h.db, op.ID)
	if err != nil {
		h.dbFail(w, r, "the operation's ledger", err)
		return
	}
	audit, err := onceops.ListAudit(r.Context(), h.db, "operation "+op.ID, 0, 20)
	if err != nil {
		h.dbFail(w, r, "the operation's audit", err)
		return
	}
	h.render(w, r, "operation", http.StatusOK, page{Title: "Operation", Nav: "uncertain", Data: map[string]any{
		"Op": op, "Ledger": ledger, "Audit": audit}})
}

func (h *handler) claims(w http.ResponseWriter, r *http.Request) {
	c := cursor(r, 2)
	list, err := listClaims(r.Context(), h.db, r.URL.Query().Get("name"), c[0], c[1])
	if err != nil {
		h.dbFail(w, r, "the open claims", err)
		return
	}
	next := ""
	if len(list) > pageSize {
		list = list[:pageSize]
		next = nextQuery(r.URL.Query(), true, list[pageSize-1].Name, list[pageSize-1].Key)
	}
	h.render(w, r, "claims", http.StatusOK, page{Title: "Open claims", Data: list, Next: next})
}

func (h *handler) latches(w http.ResponseWriter, r *http.Request) {
	c := cursor(r, 2)
	q := r.URL.Query()
	list, err := listLatches(r.Context(), h.db, q.Get("name"), q.Get("show") == "all", c[0], c[1])
	if err != nil {
		h.dbFail(w, r, "the latches", err)
		return
	}
	next := ""
	if len(list) > pageSize {
		list = list[:pageSize]
		next = nextQuery(q, true, list[pageSize-1].Name, list[pageSize-1].Key)
	}
	h.render(w, r, "latches", http.StatusOK, page{Title: "Episode latches", Data: list, Next: next})
}

func (h *handler) allowances(w http.ResponseWriter, r *http.Request) {
	c := cursor(r, 2)
	list, err := listAllowances(r.Context(), h.db, r.URL.Query().Get("name"), c[0], c[1])
	if err != nil {
		h.dbFail(w, r, "the allowances", err)
		return
	}
	next := ""
	if len(list) > pageSize {
		list = list[:pageSize]
		next = nextQuery(r.URL.Query(), true, list[pageSize-1].Name, list[pageSize-1].Key)
	}
	h.render(w, r, "allowances", http.StatusOK, page{Title: "Allowances", Data: list, Next: next})
}

func (h *handler) leases(w http.ResponseWriter, r *http.Request) {
	c := cursor(r, 2)
	q := r.URL.Query()
	list, err := listLeases(r.Context(), h.db, q.Get("name"), q.Get("show") == "all", c[0], c[1])
	if err != nil {
		h.dbFail(w, r, "the leases", err)
		return
	}
	next := ""
	if len(list) > pageSize {
		list = list[:pageSize]
		next = nextQuery(q, true, list[pageSize-1].Name, list[pageSize-1].Key)
	}
	h.render(w, r, "leases", http.StatusOK, page{Title: "Leases", Data: list, Next: next})
}

func (h *handler) followups(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	state := q.Get("state")
	if state == "" {
		state = "dead"
	}
	if state != "dead" && state != "pending" {
		h.fail(w, r, http.StatusBadRequest, "state: "+strconv.Quote(state)+" is neither pending nor dead")
		return
	}
	after, _ := strconv.ParseInt(cursor(r, 1)[0], 10, 64)
	list, err := listFollowUps(r.Context(), h.db, state, after)
	if err != nil {
		h.dbFail(w, r, "the follow-ups", err)
		return
	}
	next := ""
	if len(list) > pageSize {
		list = list[:pageSize]
		next = nextQuery(q, true, strconv.FormatInt(list[pageSize-1].ID, 10))
	}
	h.render(w, r, "followups", http.StatusOK, page{Title: "Follow-ups", Data: map[string]any{"State": state, "List": list}, Next: next})
}

func (h *handler) audit(w http.ResponseWriter, r *http.Request) {
	before, _ := strconv.ParseInt(cursor(r, 1)[0], 10, 64)
	list, err := onceops.ListAudit(r.Context(), h.db, r.URL.Query().Get("target"), before, pageSize+1)
	if err != nil {
		h.dbFail(w, r, "the audit", err)
		return
	}
	next := ""
	if len(list) > pageSize {
		list = list[:pageSize]
		next = nextQuery(r.URL.Query(), true, strconv.FormatInt(list[pageSize-1].ID, 10))
	}
	h.render(w, r, "audit", http.StatusOK, page{Title: "Audit", Data: list, Next: next})
}

// actionForm is the data of the "act" template: the form of action on page p, its button's
// label, an input of the operator's besides the reason (input, "" for none), and the hidden
// fields kv (name, value, ...) that name its target.
func actionForm(p page, action, label, input string, kv ...string) map[string]any {
	fields := map[string]string{}
	for i := 0; i+1 < len(kv); i += 2 {
		fields[kv[i]] = kv[i+1]
	}
	return map[string]any{"P": p, "Action": action, "Label": label, "Input": input, "Fields": fields}
}
