// Package xorm is a stub of xorm's engine and session.
package xorm

// Engine is xorm's database handle.
type Engine struct{}

// Session is one chain of conditions, or a transaction.
type Session struct{}

func (e *Engine) NewSession() *Session                  { return &Session{} }
func (e *Engine) Where(query any, args ...any) *Session { return &Session{} }
func (e *Engine) ID(id any) *Session                    { return &Session{} }
func (e *Engine) Table(nameOrBean any) *Session         { return &Session{} }
func (e *Engine) SQL(query any, args ...any) *Session   { return &Session{} }
func (e *Engine) Get(beans ...any) (bool, error)        { return false, nil }
func (e *Engine) Exist(bean ...any) (bool, error)       { return false, nil }
func (e *Engine) Find(beans any, conds ...any) error    { return nil }
func (e *Engine) Count(bean ...any) (int64, error)      { return 0, nil }
func (e *Engine) Insert(beans ...any) (int64, error)    { return 0, nil }
func (e *Engine) InsertOne(bean any) (int64, error)     { return 0, nil }
func (e *Engine) Exec(sqlOrArgs ...any) (any, error)    { return nil, nil }

// Transaction runs f in a transaction on one session.
func (e *Engine) Transaction(f func(*Session) (any, error)) (any, error) { return f(&Session{}) }

func (s *Session) Begin() error                           { return nil }
func (s *Session) Commit() error                          { return nil }
func (s *Session) Close() error                           { return nil }
func (s *Session) Where(query any, args ...any) *Session  { return s }
func (s *Session) And(query any, args ...any) *Session    { return s }
func (s *Session) ID(id any) *Session                     { return s }
func (s *Session) Table(nameOrBean any) *Session          { return s }
func (s *Session) ForUpdate() *Session                    { return s }
func (s *Session) In(column string, args ...any) *Session { return s }
func (s *Session) Find(beans any, conds ...any) error     { return nil }
func (s *Session) Get(beans ...any) (bool, error)         { return false, nil }
func (s *Session) Exist(bean ...any) (bool, error)        { return false, nil }
func (s *Session) Count(bean ...any) (int64, error)       { return 0, nil }
func (s *Session) Insert(beans ...any) (int64, error)     { return 0, nil }
func (s *Session) Delete(bean ...any) (int64, error)      { return 0, nil }
