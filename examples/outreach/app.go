package outreach

import (
	"errors"
	"net/http"
	"sync"
	"sync/atomic"
	"time"

	"github.com/jackc/pgx/v5/pgxpool"
)

// Config is what an App needs from its surroundings.
type Config struct {
	// DB is the app's database, migrated with Migrate.
	DB *pgxpool.Pool
	// MailURL, SourceURL and BillingURL are the base URLs of the email API, the paid data
	// source and the billing API.
	MailURL, SourceURL, BillingURL string
	// HTTP is the client for the providers; nil means a client with a 10 second timeout.
	HTTP *http.Client
	// Now is the app's clock (days, months, job schedules); nil means time.Now. Tests move
	// it across days without waiting. The app reads it in UTC, whatever zone it reports
	// in: a day, a month and the next midnight are UTC ones everywhere.
	Now func() time.Time
	// Operator is the address operator alerts go to.
	Operator string
	// PublicURL prefixes the links put in emails.
	PublicURL string
	// HealthHint is how long this process trusts its own memory that a source's alert latch
	// is armed, before asking the database again; zero means a minute. See Sources.
	HealthHint time.Duration
}

// Stats counts what the app did that tests and the demo want to see but that leaves no row:
// round trips a memo or a hint saved.
type Stats struct {
	// UserLookups counts the signed-in user's loads from the database.
	UserLookups atomic.Int64
	// Rearms counts the statements sent to rearm a source's alert latch.
	Rearms atomic.Int64
	// TruthReads counts the reads of a billing customer's state from the billing API.
	TruthReads atomic.Int64
}

// App is the outreach app: its HTTP handlers, its worker's jobs, and the guarded functions
// both call.
type App struct {
	db      *pgxpool.Pool
	mail    client
	source  client
	billing client
	now     func() time.Time
	cfg     Config

	// healthy is a hint, not a guard: which sources this process has seen answer, and
	// until when it skips the rearm statement for them. See sourceWorked.
	healthyMu sync.Mutex
	healthy   map[string]time.Time
	failures  uint64 // sources seen failing, so a rearm racing a failure keeps no hint

	// Stats counts round trips saved or made.
	Stats Stats
}

// New returns an App over cfg.
func New(cfg Config) (*App, error) {
	if cfg.DB == nil {
		return nil, errors.New("outreach: Config.DB is nil")
	}
	if cfg.MailURL == "" || cfg.SourceURL == "" || cfg.BillingURL == "" {
		return nil, errors.New("outreach: Config needs MailURL, SourceURL and BillingURL")
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
	if cfg.HealthHint == 0 {
		cfg.HealthHint = time.Minute
	}
	return &App{
		db:      cfg.DB,
		mail:    client{base: cfg.MailURL, http: cfg.HTTP},
		source:  client{base: cfg.SourceURL, http: cfg.HTTP},
		billing: client{base: cfg.BillingURL, http: cfg.HTTP},
		now:     func() time.Time { return cfg.Now().UTC() },
		cfg:     cfg,
		healthy: map[string]time.Time{},
	}, nil
}

// Day is a calendar day in UTC, as "2006-01-02": the unit of a daily budget and a digest.
type Day string

// DayOf returns the day t falls on, in UTC.
func DayOf(t time.Time) Day { return Day(t.UTC().Format(time.DateOnly)) }

// monthStart returns the first instant of t's month, in UTC: where a monthly allowance
// starts counting.
func monthStart(t time.Time) time.Time {
	t = t.UTC()
	return time.Date(t.Year(), t.Month(), 1, 0, 0, 0, 0, time.UTC)
}
