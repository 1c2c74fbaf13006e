package naive

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"net/http"
	"sync"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// Config is what an App needs; it has the fields of outreach.Config that apply.
type Config struct {
	DB                             *pgxpool.Pool
	MailURL, SourceURL, BillingURL string
	HTTP                           *http.Client
	Now                            func() time.Time
	Operator                       string
	// Hooks is for tests; the zero value does nothing.
	Hooks Hooks
}

// Hooks lets a test hold requests at the points where this app decides from a read.
type Hooks struct {
	// Checked runs after a read that decides a write and before that write: "thread"
	// (StartThread's counts), "job" (enqueue's check), "budget" (the source's counter).
	Checked func(what string)
}

func (h Hooks) checked(what string) {
	if h.Checked != nil {
		h.Checked(what)
	}
}

// PlacesDailyCap is the paid source's daily budget, as in package outreach.
const PlacesDailyCap = 50

// App is the naive outreach app.
type App struct {
	db  *pgxpool.Pool
	cfg Config

	// seen is the inbound messages this process has handled: the only thing between a
	// redelivered message and a second notification.
	seen sync.Map
}

// New returns an App over cfg.
func New(cfg Config) (*App, error) {
	if cfg.DB == nil {
		return nil, errors.New("naive: Config.DB is nil")
	}
	if cfg.HTTP == nil {
		cfg.HTTP = &http.Client{Timeout: 10 * time.Second}
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	if cfg.Operator == "" {
		cfg.Operator = "operator@outreach.test"
	}
	return &App{db: cfg.DB, cfg: cfg}, nil
}

//go:embed schema.sql
var schema string

// Migrate creates the naive app's tables.
func Migrate(ctx context.Context, db *pgxpool.Pool) error {
	if _, err := db.Exec(ctx, schema); err != nil {
		return fmt.Errorf("naive: creating the tables: %w", err)
	}
	return nil
}

func (a *App) now() time.Time { return a.cfg.Now() }

func day(t time.Time) string { return t.UTC().Format(time.DateOnly) }

// Allowance is as in package outreach.
func Allowance(plan string) int {
	switch plan {
	case "pro":
		return 50
	case "team":
		return 200
	default:
		return 5
	}
}
