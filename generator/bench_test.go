package generator_test

import (
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"golang.org/x/tools/go/packages"

	"github.com/oncekit/once/generator"
)

// cpuTime is the user and system time used so far by this process and its waited-for
// children (the go command).
func cpuTime() time.Duration {
	var self, children syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &self)
	syscall.Getrusage(syscall.RUSAGE_CHILDREN, &children)
	tv := func(t syscall.Timeval) time.Duration { return time.Duration(t.Nano()) }
	return tv(self.Utime) + tv(self.Stime) + tv(children.Utime) + tv(children.Stime)
}

// benchModule writes a module example.com/bench that uses this checkout of once, with
// files (relative path → content), and returns its directory.
func benchModule(b *testing.B, files map[string]string) string {
	b.Helper()
	dir := b.TempDir()
	repo := root(b)
	sum, err := os.ReadFile(filepath.Join(repo, "go.sum"))
	if err != nil {
		b.Fatal(err)
	}
	all := map[string]string{
		"go.mod": "module example.com/bench\n\ngo 1.26.0\n\nrequire (\n\tgithub.com/jackc/pgx/v5 v5.12.0\n\tgithub.com/oncekit/once v0.0.0-00010101000000-000000000000\n)\n\nreplace github.com/oncekit/once => " + repo + "\n",
		"go.sum": string(sum),
	}
	for k, v := range files {
		all[k] = v
	}
	for name, content := range all {
		path := filepath.Join(dir, name)
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			b.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(content), 0o644); err != nil {
			b.Fatal(err)
		}
	}
	return dir
}

// generateOnce lets the go command complete go.mod, and generates the module's files once,
// as go generate leaves them: the benchmarks measure oncegen run again, as a module that
// uses once runs it.
func generateOnce(b *testing.B, dir string) {
	b.Helper()
	gocmd := func(args ...string) {
		b.Helper()
		cmd := exec.Command("go", args...)
		cmd.Dir = dir
		cmd.Env = append(os.Environ(), "GOFLAGS=-mod=mod", "GOPROXY=off")
		if out, err := cmd.CombinedOutput(); err != nil {
			b.Fatalf("go %s: %v\n%s", strings.Join(args, " "), err, out)
		}
	}
	gocmd("mod", "tidy")
	pkgs, err := generator.Load(generator.LoadConfig{Dir: dir})
	if err != nil {
		b.Fatal(err)
	}
	res, err := generator.Generate(pkgs)
	if err != nil {
		b.Fatal(err)
	}
	if _, err := generator.Write(res); err != nil {
		b.Fatal(err)
	}
	gocmd("build", "./...")
}

// thousandDirectives is one package of 1,000 guarded functions, every kind and form in
// turn (the table= forms too), with their once_gen.go.
func thousandDirectives(b *testing.B) string {
	b.Helper()
	kinds := []string{
		"//once:forever key=u.ID,u.Org",
		"//once:open key=u.ID stale=5m",
		"//once:episode key=u.Org",
		"//once:statement key=u.Org cap=10 n=2",
		"//once:lease key=u.ID ttl=10s",
		"//once:provider key=u.ID prefix=mail",
		"//once:request key=u.ID",
		"//once:transaction key=u.Org",
		"//once:forever table=t{n} columns=id",
		"//once:open table=t{n} columns=id status=status open=pending,running",
	}
	var src strings.Builder
	src.WriteString("// Package p holds 1,000 guarded functions.\npackage p\n\nimport (\n\t\"context\"\n\n\t\"github.com/jackc/pgx/v5\"\n\n\tonce \"github.com/oncekit/once/runtime\"\n)\n\n// User is a user.\ntype User struct {\n\tID  int64\n\tOrg string\n}\n\nvar (\n\t_ pgx.Tx\n\t_ once.DB\n)\n")
	for f := range 1000 {
		k := kinds[f%len(kinds)]
		params := "ctx context.Context, u User"
		if strings.Contains(k, "table=") || strings.Contains(k, "transaction") {
			params = "ctx context.Context, tx pgx.Tx, u User"
		}
		fmt.Fprintf(&src, "\n// F%d does one thing.\n//\n%s\nfunc F%d(%s) (string, error) { return u.Org, nil }\n", f, strings.ReplaceAll(k, "{n}", fmt.Sprint(f)), f, params)
	}
	dir := benchModule(b, map[string]string{"p/p.go": src.String()})
	generateOnce(b, dir)
	return dir
}

// compare measures, in turn in each iteration (so a busy machine slows both alike),
// packages.Load of pattern in dir with generation's mode, and oncegen (load, validate,
// type-check keys, render, plan and render the migrations), and reports each one's
// milliseconds, oncegen's by part, and the ratios (goal: at most 1.5). With edit, each
// iteration first adds a comment to that file, as a package is edited before it is
// generated again: what the go command compiled of it is no longer in its cache.
func compare(b *testing.B, dir, pattern string, guards int, edit string) {
	b.Helper()
	var src []byte
	if edit != "" {
		var err error
		if src, err = os.ReadFile(filepath.Join(dir, edit)); err != nil {
			b.Fatal(err)
		}
	}
	iteration := 0
	migs := b.TempDir()
	mode := packages.NeedName | packages.NeedFiles | packages.NeedSyntax | packages.NeedTypes |
		packages.NeedTypesInfo | packages.NeedModule
	var load, gen, genLoad, genGenerate, loadCPU, genCPU time.Duration
	for b.Loop() {
		if edit != "" {
			iteration++
			b.StopTimer()
			if err := os.WriteFile(filepath.Join(dir, edit), fmt.Appendf(src, "\n// edit %d\n", iteration), 0o644); err != nil {
				b.Fatal(err)
			}
			b.StartTimer()
		}
		cpu0 := cpuTime()
		start := time.Now()
		pkgs, err := packages.Load(&packages.Config{Mode: mode, Dir: dir}, pattern)
		if err != nil || len(pkgs) != 1 || len(pkgs[0].Errors) > 0 {
			b.Fatalf("load: %v %v", err, pkgs)
		}
		load += time.Since(start)
		cpu1 := cpuTime()
		loadCPU += cpu1 - cpu0

		start = time.Now()
		gpkgs, err := generator.Load(generator.LoadConfig{Dir: dir, Patterns: []string{pattern}})
		if err != nil {
			b.Fatal(err)
		}
		genLoad += time.Since(start)
		mid := time.Now()
		res, err := generator.Generate(gpkgs)
		if err != nil {
			b.Fatal(err)
		}
		genGenerate += time.Since(mid)
		objs, err := generator.Objects(res.Guards)
		if err != nil {
			b.Fatal(err)
		}
		plan, err := generator.Diff(generator.Snapshot{Version: 1}, res.Guards, objs, false)
		if err != nil {
			b.Fatal(err)
		}
		if _, err := generator.MigrationFiles(migs, "goose", plan, generator.Options{}); err != nil {
			b.Fatal(err)
		}
		gen += time.Since(start)
		genCPU += cpuTime() - cpu1
		if len(res.Guards) != guards || len(res.Files) != 1 {
			b.Fatalf("%d guards in %d files", len(res.Guards), len(res.Files))
		}
		if stale, err := res.Stale(); err != nil || len(stale) != 0 {
			b.Fatalf("the generated file is not what was generated before: %v", err)
		}
	}
	n := float64(b.N)
	ms := func(d time.Duration) float64 { return float64(d.Microseconds()) / 1000 / n }
	b.ReportMetric(ms(load), "load-ms/op")
	b.ReportMetric(ms(gen), "oncegen-ms/op")
	b.ReportMetric(ms(genLoad), "oncegen-load-ms/op")
	b.ReportMetric(ms(genGenerate), "oncegen-generate-ms/op")
	b.ReportMetric(float64(gen)/float64(load), "ratio")
	// CPU time (this process and the go commands it ran) depends less on what else the
	// machine is doing than wall time on a shared machine.
	b.ReportMetric(ms(loadCPU), "load-cpu-ms/op")
	b.ReportMetric(ms(genCPU), "oncegen-cpu-ms/op")
	b.ReportMetric(float64(genCPU)/float64(loadCPU), "cpu-ratio")
}

// BenchmarkGenerate_1000Directives measures oncegen on one package of 1,000 directives
// against a bare packages.Load of the same package, in the same run (goal: at most 1.5):
// unchanged since the go command last compiled it, and edited.
func BenchmarkGenerate_1000Directives(b *testing.B) {
	dir := thousandDirectives(b)
	b.Run("unchanged", func(b *testing.B) { compare(b, dir, "./p", 1000, "") })
	b.Run("edited", func(b *testing.B) { compare(b, dir, "./p", 1000, "p/p.go") })
}

// BenchmarkGenerate_MidSizeService measures oncegen on one package of a mid-size service
// (midSizeService) against a bare packages.Load of it, in the same run: unchanged since the
// go command last compiled it, and edited.
func BenchmarkGenerate_MidSizeService(b *testing.B) {
	dir := benchModule(b, midSizeService())
	generateOnce(b, dir)
	b.Run("unchanged", func(b *testing.B) { compare(b, dir, "./service", 24, "") })
	b.Run("edited", func(b *testing.B) { compare(b, dir, "./service", 24, "service/server.go") })
}

// midSizeService is one package of a service as teams write them: 12 domains of 4 files
// (model, HTTP handlers, store, a call through a guard), 50 files and about 3,500 lines, over net/http,
// encoding/json, log/slog and pgx (its pool and its errors), with 24 guards of every kind
// and form, called by the handlers through their wrappers.
func midSizeService() map[string]string {
	files := map[string]string{}
	files["service/server.go"] = `// Package service is a mid-size HTTP service over PostgreSQL.
package service

import (
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net/http"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// Server serves the API.
type Server struct {
	pool   *pgxpool.Pool
	mux    *http.ServeMux
	log    *slog.Logger
	client *http.Client
}

// NewServer connects to the database and registers the routes.
func NewServer(ctx context.Context, url string, log *slog.Logger) (*Server, error) {
	pool, err := pgxpool.New(ctx, url)
	if err != nil {
		return nil, err
	}
	s := &Server{pool: pool, mux: http.NewServeMux(), log: log, client: &http.Client{Timeout: 10 * time.Second}}
	s.routes()
	return s, nil
}

func (s *Server) ServeHTTP(w http.ResponseWriter, r *http.Request) { s.mux.ServeHTTP(w, r) }

func writeJSON(w http.ResponseWriter, status int, v any) {
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_ = json.NewEncoder(w).Encode(v)
}

func writeError(w http.ResponseWriter, err error) {
	status := http.StatusInternalServerError
	var bad *badRequest
	if errors.As(err, &bad) {
		status = http.StatusBadRequest
	}
	writeJSON(w, status, map[string]string{"error": err.Error()})
}

type badRequest struct{ msg string }

func (e *badRequest) Error() string { return e.msg }
`
	var routes strings.Builder
	routes.WriteString("package service\n\nfunc (s *Server) routes() {\n")
	domains := []string{"Order", "Invoice", "Refund", "Payout", "Customer", "Subscription", "Alert", "Export", "Report", "Webhook", "Invite", "Quota"}
	keyKinds := []string{
		"//once:forever key=in.ID",
		"//once:open key=in.ID stale=5m",
		"//once:episode key=in.Account",
		"//once:statement key=in.Account cap=100 n=1",
		"//once:lease key=in.Account ttl=10s",
		"//once:provider key=in.ID prefix={domain}",
	}
	tableKinds := []string{
		"//once:forever table={domain}_events columns=event_id",
		"//once:open table={domain}_jobs columns=dedupe_key status=status open=pending,running",
		"//once:episode table={domain}_alerts columns=rule_id latch=fired_at",
		"//once:statement table={domain}_usage columns=account,day counter=used cap=1000",
	}
	for i, d := range domains {
		lower := strings.ToLower(d)
		fmt.Fprintf(&routes, "\ts.mux.HandleFunc(\"POST /%[1]ss\", s.handleCreate%[2]s)\n\ts.mux.HandleFunc(\"GET /%[1]ss/{id}\", s.handleGet%[2]s)\n\ts.mux.HandleFunc(\"POST /%[1]ss/{id}/send\", s.handleSend%[2]s)\n", lower, d)
		files["service/"+lower+"_model.go"] = fmt.Sprintf(`package service

import (
	"encoding/json"
	"fmt"
	"net/http"
	"strings"
	"time"
)

// %[1]s is one %[2]s of an account.
type %[1]s struct {
	ID        string            `+"`json:\"id\"`"+`
	Account   string            `+"`json:\"account\"`"+`
	Amount    int64             `+"`json:\"amount\"`"+`
	Currency  string            `+"`json:\"currency\"`"+`
	Status    string            `+"`json:\"status\"`"+`
	Note      string            `+"`json:\"note,omitempty\"`"+`
	Labels    map[string]string `+"`json:\"labels,omitempty\"`"+`
	CreatedAt time.Time         `+"`json:\"created_at\"`"+`
	UpdatedAt time.Time         `+"`json:\"updated_at\"`"+`
}

// %[1]sInput is what a client sends to create a %[2]s.
type %[1]sInput struct {
	ID       string            `+"`json:\"id\"`"+`
	Account  string            `+"`json:\"account\"`"+`
	Amount   int64             `+"`json:\"amount\"`"+`
	Currency string            `+"`json:\"currency\"`"+`
	Note     string            `+"`json:\"note\"`"+`
	Labels   map[string]string `+"`json:\"labels\"`"+`
}

func decode%[1]s(r *http.Request) (%[1]sInput, error) {
	var in %[1]sInput
	dec := json.NewDecoder(r.Body)
	dec.DisallowUnknownFields()
	if err := dec.Decode(&in); err != nil {
		return in, &badRequest{fmt.Sprintf("decoding a %[2]s: %%v", err)}
	}
	if err := in.validate(); err != nil {
		return in, err
	}
	return in, nil
}

func (in %[1]sInput) validate() error {
	switch {
	case strings.TrimSpace(in.ID) == "":
		return &badRequest{"a %[2]s needs an id"}
	case in.Account == "":
		return &badRequest{"a %[2]s needs an account"}
	case in.Amount < 0:
		return &badRequest{"a %[2]s's amount is not negative"}
	case len(in.Currency) != 3:
		return &badRequest{"a currency is three letters"}
	}
	for k := range in.Labels {
		if len(k) > 64 {
			return &badRequest{"a label is at most 64 bytes"}
		}
	}
	return nil
}

func (x %[1]s) summary() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%[2]s %%s of %%s: %%d %%s (%%s)", x.ID, x.Account, x.Amount, x.Currency, x.Status)
	for k, v := range x.Labels {
		fmt.Fprintf(&b, " %%s=%%s", k, v)
	}
	return b.String()
}
`, d, lower)
		key := strings.ReplaceAll(keyKinds[i%len(keyKinds)], "{domain}", lower)
		table := strings.ReplaceAll(tableKinds[i%len(tableKinds)], "{domain}", lower)
		files["service/"+lower+"_store.go"] = fmt.Sprintf(`package service

import (
	"context"
	"errors"
	"fmt"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"

	once "github.com/oncekit/once/runtime"
)

var err%[1]sNotFound = errors.New("%[2]s not found")

func get%[1]s(ctx context.Context, db once.DB, id string) (%[1]s, error) {
	var x %[1]s
	err := db.QueryRow(ctx, "SELECT id, account, amount, currency, status, note, created_at, updated_at FROM %[2]ss WHERE id = $1", id).
		Scan(&x.ID, &x.Account, &x.Amount, &x.Currency, &x.Status, &x.Note, &x.CreatedAt, &x.UpdatedAt)
	if errors.Is(err, pgx.ErrNoRows) {
		return x, err%[1]sNotFound
	}
	return x, err
}

func list%[1]ss(ctx context.Context, db once.DB, account string, limit int) ([]%[1]s, error) {
	rows, err := db.Query(ctx, "SELECT id, account, amount, currency, status FROM %[2]ss WHERE account = $1 ORDER BY created_at DESC LIMIT $2", account, limit)
	if err != nil {
		return nil, fmt.Errorf("listing %[2]ss: %%w", err)
	}
	return pgx.CollectRows(rows, func(row pgx.CollectableRow) (%[1]s, error) {
		var x %[1]s
		err := row.Scan(&x.ID, &x.Account, &x.Amount, &x.Currency, &x.Status)
		return x, err
	})
}

// Create%[1]s stores a new %[2]s.
//
%[3]s
func Create%[1]s(ctx context.Context, in %[1]sInput) (%[1]s, error) {
	return %[1]s{ID: in.ID, Account: in.Account, Amount: in.Amount, Currency: in.Currency, Status: "new"}, nil
}

// Record%[1]sEvent records a %[2]s's event in the service's own table.
//
%[4]s
func Record%[1]sEvent(ctx context.Context, tx pgx.Tx, in %[1]sInput) error {
	_, err := tx.Exec(ctx, "INSERT INTO %[2]s_events (event_id, account) VALUES ($1, $2)", in.ID, in.Account)
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && pgErr.Code == "23505" {
		return once.ErrConflict
	}
	return err
}

func update%[1]sStatus(ctx context.Context, tx pgx.Tx, id, status string) error {
	tag, err := tx.Exec(ctx, "UPDATE %[2]ss SET status = $2, updated_at = now() WHERE id = $1", id, status)
	if err != nil {
		return err
	}
	if tag.RowsAffected() == 0 {
		return err%[1]sNotFound
	}
	return nil
}
`, d, lower, key, table)
		files["service/"+lower+"_handlers.go"] = fmt.Sprintf(`package service

import (
	"context"
	"errors"
	"net/http"
	"strconv"
	"time"

	"github.com/jackc/pgx/v5"
)

func (s *Server) handleCreate%[1]s(w http.ResponseWriter, r *http.Request) {
	in, err := decode%[1]s(r)
	if err != nil {
		writeError(w, err)
		return
	}
	ctx, cancel := context.WithTimeout(r.Context(), 5*time.Second)
	defer cancel()
	out, err := call%[1]s(ctx, s, in)
	if err != nil {
		s.log.Error("creating a %[2]s", "id", in.ID, "err", err)
		writeError(w, err)
		return
	}
	if _, err := Record%[1]sEventOnce(ctx, s.pool, in); err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusCreated, out)
}

func (s *Server) handleGet%[1]s(w http.ResponseWriter, r *http.Request) {
	x, err := get%[1]s(r.Context(), s.pool, r.PathValue("id"))
	if errors.Is(err, err%[1]sNotFound) {
		http.NotFound(w, r)
		return
	}
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, x)
}

func (s *Server) handleSend%[1]s(w http.ResponseWriter, r *http.Request) {
	limit := 50
	if v := r.URL.Query().Get("limit"); v != "" {
		n, err := strconv.Atoi(v)
		if err != nil || n <= 0 {
			writeError(w, &badRequest{"limit is a positive number"})
			return
		}
		limit = n
	}
	xs, err := list%[1]ss(r.Context(), s.pool, r.PathValue("id"), limit)
	if err != nil {
		writeError(w, err)
		return
	}
	err = pgx.BeginFunc(r.Context(), s.pool, func(tx pgx.Tx) error {
		for _, x := range xs {
			if err := update%[1]sStatus(r.Context(), tx, x.ID, "sent"); err != nil {
				return err
			}
			s.log.Info("sent", "summary", x.summary())
		}
		return nil
	})
	if err != nil {
		writeError(w, err)
		return
	}
	writeJSON(w, http.StatusOK, map[string]int{"sent": len(xs)})
}
`, d, lower)
		files["service/"+lower+"_call.go"] = callFile(d, key)
	}
	routes.WriteString("}\n")
	files["service/routes.go"] = routes.String()
	return files
}

// callFile calls a domain's key= guard through its wrapper, whatever its kind returns.
func callFile(d, directive string) string {
	body := fmt.Sprintf("out, _, err := Create%[1]sOnce(ctx, s.pool, in)\n\treturn out, err", d)
	switch {
	case strings.Contains(directive, "provider"):
		body = fmt.Sprintf("out, _, err := Create%[1]sOnce(ctx, in)\n\treturn out, err", d)
	case strings.Contains(directive, "lease"):
		body = fmt.Sprintf("out, _, err := Create%[1]sOnce(ctx, s.pool, in)\n\treturn out, err", d)
	}
	return fmt.Sprintf("package service\n\nimport \"context\"\n\nfunc call%[1]s(ctx context.Context, s *Server, in %[1]sInput) (%[1]s, error) {\n\t%[2]s\n}\n", d, body)
}
