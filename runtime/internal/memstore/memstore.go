// Package memstore holds the state of oncetest.Memory, the in-memory stand-in for once.DB
// in unit tests: one map per kind of guard state, under one mutex, and the clock that
// stands in for the database's. It keeps rows only; what a guard does with them is package
// once's (memory.go), beside the SQL it stands in for.
package memstore

import (
	"errors"
	"sync"
	"time"
)

// ErrNoSQL is the error of every statement sent to the stand-in, and of the guards that need
// a real transaction (Transaction, Table, checkpoints): it keeps state in memory and runs no
// SQL.
var ErrNoSQL = errors.New("oncetest: the in-memory stand-in runs no SQL; use oncetest.DB for a test that needs PostgreSQL")

// Holder is what the stand-in implements and the guards look for: a DB whose state is a
// Store rather than a database.
type Holder interface {
	MemoryStore() *Store
}

// Key names a row of a guard's state: the guard's name and the key.
type Key struct{ Name, Key string }

// OpKey names an operation of a Forever guard: the guard's name, the scope and the key.
type OpKey struct{ Name, Scope, Key string }

// Operation is a Forever guard's row (once.operations).
type Operation struct {
	ID, State, Token string
	Attempts         int
	Fingerprint      []byte
	Result           []byte
	Form             string // the result's form (sealed, digest, none), "" for a plain one
	Err              *string
	AliveAt          time.Time
	Retain           time.Duration
	// ExpiresAt is when a settled outcome is forgotten; zero for never.
	ExpiresAt time.Time
}

// Latch is an Episode guard's latch (once.latches).
type Latch struct {
	Fired   bool
	Firings int64
	Token   string
}

// Claim is an Open guard's open claim (once.open_claims); a settled or stale claim is
// removed, as nothing reads it but to say it is no longer open.
type Claim struct {
	ID      int64
	Token   string
	AliveAt time.Time
	Stale   time.Duration
}

// Counter is a Statement guard's units of one key (once.counter_slots): how many each
// reservation's token holds.
type Counter struct {
	Used  int64
	Units map[string]int64
}

// Lease is a Lease guard's row (once.leases).
type Lease struct {
	Holder    string
	Fence     int64
	ExpiresAt time.Time
	Released  bool
}

// Store is the state of one stand-in. Every read and write holds its mutex, so each guard
// step is atomic, as its one statement is in PostgreSQL.
type Store struct {
	sync.Mutex
	// Now is the clock that judges expiry and staleness, PostgreSQL's clock_timestamp() in
	// the real thing.
	Now func() time.Time

	Operations map[OpKey]*Operation
	Latches    map[Key]*Latch
	Claims     map[Key]*Claim
	LastClaim  int64
	Counters   map[Key]*Counter
	Leases     map[Key]*Lease
}

// New returns an empty store on the local clock.
func New() *Store {
	return &Store{
		Now:        time.Now,
		Operations: map[OpKey]*Operation{},
		Latches:    map[Key]*Latch{},
		Claims:     map[Key]*Claim{},
		Counters:   map[Key]*Counter{},
		Leases:     map[Key]*Lease{},
	}
}
