package effects

import (
	"path/filepath"

	"golang.org/x/tools/go/analysis"
)

// inModule reports whether the package belongs to the module being analysed: only such a
// package's functions carry an effect to their callers. A library's internals are not
// effects unless the catalogue names them (a logger that may post to a webhook, a client
// constructor, an OAuth token exchange), so the packages of dependencies export none.
//
// The module is known from the build: go vet (on Go 1.26 through ModulePath and
// ModuleVersion in its configuration, on 1.27 through Module) and go/packages both say
// which module a package belongs to and at which version. The main module, and each
// module of a go.work workspace, has no version; a dependency has one (a module replaced
// by a directory keeps the version it replaces). The standard library has no module. With
// no module information at all (GOPATH mode), a package is the module's unless its
// directory is in the Go root or the module cache.
func inModule(pass *analysis.Pass) bool {
	if len(pass.Files) == 0 || dependency(filepath.Dir(pass.Fset.File(pass.Files[0].Pos()).Name())) {
		return false
	}
	if m := pass.Module; m != nil && m.Path != "" {
		return m.Version == ""
	}
	return true
}
