// Package gin is a stub of gin.
package gin

type Context struct{}

func (c *Context) Param(key string) string      { return "" }
func (c *Context) JSON(code int, obj any)       {}
func (c *Context) ShouldBindJSON(obj any) error { return nil }

type HandlerFunc func(*Context)

type Engine struct{}

func New() *Engine { return &Engine{} }

func (e *Engine) POST(path string, handlers ...HandlerFunc) {}
