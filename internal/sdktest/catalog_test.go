package sdktest_test

import (
	"encoding/json"
	"fmt"
	"go/types"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"

	"golang.org/x/tools/go/packages"

	"github.com/oncekit/once/analyzer/catalog"
)

// The built-in catalogue, as the once module embeds it.
var providersJSON = filepath.Join("..", "..", "analyzer", "catalog", "catalog.json")

// entry is one name of the catalogue, with what it says about the name.
type entry struct {
	Func    string
	Key     *catalog.Key
	Request *request
	URL     *int // the argument holding the URL a transport posts to
}

// request names the argument holding the *http.Request a transport sends.
type request struct{ Arg int }

func readCatalogue(t *testing.T) []entry {
	t.Helper()
	data, err := os.ReadFile(providersJSON)
	if err != nil {
		t.Fatal(err)
	}
	var f struct {
		Effects    []catalog.Effect
		Transports []catalog.Transport
		Unstable   []catalog.Unstable
	}
	if err := json.Unmarshal(data, &f); err != nil {
		t.Fatalf("%s: %v", providersJSON, err)
	}
	var out []entry
	for _, e := range f.Effects {
		if e.Func != "" { // an endpoint's entry names no Go function
			out = append(out, entry{Func: e.Func, Key: e.Key})
		}
	}
	for _, tr := range f.Transports {
		e := entry{Func: tr.Func, URL: tr.URL}
		if tr.Request != nil {
			e.Request = &request{Arg: *tr.Request}
		}
		out = append(out, e)
	}
	for _, u := range f.Unstable {
		out = append(out, entry{Func: u.Func})
	}
	return out
}

// splitName returns the package path, the receiver type's name ("" for a function) and
// the function's name of a full name as types.Func.FullName prints it.
func splitName(full string) (pkg, recv, name string, err error) {
	s := full
	if strings.HasPrefix(s, "(") {
		end := strings.Index(s, ")")
		if end < 0 || !strings.HasPrefix(s[end:], ").") {
			return "", "", "", fmt.Errorf("malformed method name")
		}
		name = s[end+2:]
		s = strings.TrimPrefix(s[1:end], "*")
		dot := strings.LastIndex(s, ".")
		return s[:dot], s[dot+1:], name, nil
	}
	dot := strings.LastIndex(s, ".")
	if dot <= strings.LastIndex(s, "/")+1 {
		return "", "", "", fmt.Errorf("malformed function name")
	}
	return s[:dot], "", s[dot+1:], nil
}

// resolve returns the package an entry names, at the major version it names: an entry for
// stripe-go/v82 is checked against v82 even where v85 is imported too.
func resolve(path string, loaded map[string]*packages.Package) (*packages.Package, error) {
	if p, ok := loaded[path]; ok {
		return p, nil
	}
	return nil, fmt.Errorf("package %s is not imported by the test module", path)
}

var (
	loadOnce   sync.Once
	loadedSDKs map[string]*packages.Package
	loadErr    error
)

// loadSDKs loads the packages this module imports (sdks_test.go) with their types, once
// for every test: loading them takes most of a minute.
func loadSDKs(t *testing.T) map[string]*packages.Package {
	t.Helper()
	loadOnce.Do(func() {
		cfg := &packages.Config{Mode: packages.NeedName | packages.NeedTypes | packages.NeedImports | packages.NeedDeps | packages.NeedModule, Tests: true}
		pkgs, err := packages.Load(cfg, ".")
		if err != nil {
			loadErr = err
			return
		}
		loaded := map[string]*packages.Package{}
		var errs []string
		packages.Visit(pkgs, nil, func(p *packages.Package) {
			if len(p.Errors) > 0 {
				errs = append(errs, fmt.Sprintf("%s: %v", p.PkgPath, p.Errors))
			}
			loaded[p.PkgPath] = p
		})
		if len(errs) > 0 {
			loadErr = fmt.Errorf("loading the SDKs:\n%s", strings.Join(errs, "\n"))
			return
		}
		if len(loaded) < 100 {
			loadErr = fmt.Errorf("loaded %d packages: the SDKs are missing", len(loaded))
			return
		}
		loadedSDKs = loaded
	})
	if loadErr != nil {
		t.Fatal(loadErr)
	}
	return loadedSDKs
}

// Every function, method, argument, key field, setter and header option the catalogue
// names exists in the SDK it names, at the version this module requires.
func TestCatalogue_NamesExistInTheRealSDKs(t *testing.T) {
	entries := readCatalogue(t)
	loaded := loadSDKs(t)
	checked := 0
	for _, e := range entries {
		if err := check(e, loaded); err != nil {
			t.Errorf("%s: %v", e.Func, err)
			continue
		}
		checked++
	}
	t.Logf("%d of %d catalogue entries checked against the SDKs", checked, len(entries))
}

func check(e entry, loaded map[string]*packages.Package) error {
	if full, ok := strings.CutSuffix(e.Func, ".*"); ok {
		_, err := resolve(full, loaded)
		return err
	}
	path, recv, name, err := splitName(e.Func)
	if err != nil {
		return err
	}
	pkg, err := resolve(path, loaded)
	if err != nil {
		return err
	}
	fn, err := lookup(pkg, recv, name)
	if err != nil {
		return err
	}
	sig := fn.Signature()
	if e.Request != nil {
		if err := isRequest(sig, e.Request.Arg); err != nil {
			return fmt.Errorf("request: %w", err)
		}
	}
	if e.URL != nil {
		if err := isURL(sig, *e.URL); err != nil {
			return fmt.Errorf("url: %w", err)
		}
	}
	if e.Key == nil {
		return nil
	}
	if e.Key.Header != "" {
		return headerOption(sig, pkg, e, loaded)
	}
	arg, err := param(sig, e.Key.Arg)
	if err != nil {
		return fmt.Errorf("key: %w", err)
	}
	if e.Key.Field != "" {
		obj, _, _ := types.LookupFieldOrMethod(arg, true, fn.Pkg(), e.Key.Field)
		if _, ok := obj.(*types.Var); !ok {
			return fmt.Errorf("key: argument %d (%s) has no field %s", e.Key.Arg, arg, e.Key.Field)
		}
	}
	if e.Key.Setter != "" {
		obj, _, _ := types.LookupFieldOrMethod(ptrTo(arg), true, fn.Pkg(), e.Key.Setter)
		if _, ok := obj.(*types.Func); !ok {
			return fmt.Errorf("key: argument %d (%s) has no method %s", e.Key.Arg, arg, e.Key.Setter)
		}
	}
	return nil
}

// lookup returns the package's function, or the method of its type: in the method set of
// a pointer to a concrete type, or of an interface type itself (a pointer to an interface
// has no methods).
func lookup(pkg *packages.Package, recv, name string) (*types.Func, error) {
	if recv == "" {
		f, ok := pkg.Types.Scope().Lookup(name).(*types.Func)
		if !ok {
			return nil, fmt.Errorf("%s has no function %s", pkg.PkgPath, name)
		}
		return f, nil
	}
	tn, ok := pkg.Types.Scope().Lookup(recv).(*types.TypeName)
	if !ok {
		return nil, fmt.Errorf("%s has no type %s", pkg.PkgPath, recv)
	}
	t := tn.Type()
	if !types.IsInterface(t) {
		t = types.NewPointer(t)
	}
	obj, _, _ := types.LookupFieldOrMethod(t, true, pkg.Types, name)
	f, ok := obj.(*types.Func)
	if !ok {
		return nil, fmt.Errorf("%s.%s has no method %s", pkg.PkgPath, recv, name)
	}
	return f, nil
}

// param returns the type of argument i, the receiver not counted; the last parameter of a
// variadic function stands for every argument from its index on.
func param(sig *types.Signature, i int) (types.Type, error) {
	n := sig.Params().Len()
	switch {
	case i < 0:
	case i < n-1 || (i == n-1 && !sig.Variadic()):
		return sig.Params().At(i).Type(), nil
	case sig.Variadic() && i >= n-1:
		return sig.Params().At(n - 1).Type().(*types.Slice).Elem(), nil
	}
	return nil, fmt.Errorf("no argument %d in %s", i, sig)
}

func ptrTo(t types.Type) types.Type {
	if _, ok := t.Underlying().(*types.Pointer); ok {
		return t
	}
	return types.NewPointer(t)
}

const httpRequest = "net/http.Request"

// isRequest checks that argument i is a *net/http.Request, or a pointer to a struct that
// embeds one (go-retryablehttp's Request), whose URL and headers are the embedded request's.
func isRequest(sig *types.Signature, i int) error {
	t, err := param(sig, i)
	if err != nil {
		return err
	}
	ptr, ok := types.Unalias(t).(*types.Pointer)
	if !ok {
		return fmt.Errorf("argument %d is %s, not *%s", i, t, httpRequest)
	}
	if types.TypeString(ptr.Elem(), nil) == httpRequest {
		return nil
	}
	if st, ok := ptr.Elem().Underlying().(*types.Struct); ok {
		for f := range st.Fields() {
			if f.Embedded() && types.TypeString(f.Type(), nil) == "*"+httpRequest {
				return nil
			}
		}
	}
	return fmt.Errorf("argument %d is %s, neither *%s nor a pointer to a struct embedding one", i, t, httpRequest)
}

// isURL checks that argument i is the string of the URL a transport posts to.
func isURL(sig *types.Signature, i int) error {
	t, err := param(sig, i)
	if err != nil {
		return err
	}
	if b, ok := t.Underlying().(*types.Basic); !ok || b.Kind() != types.String {
		return fmt.Errorf("argument %d is %s, not a string", i, t)
	}
	return nil
}

// headerOption checks that a header key can be passed the way the catalogue says it is:
// on the *http.Request the call sends, or with option.WithHeader among the call's variadic
// request options, where the option type is declared (as a type or an alias) by a package
// of the SDK's own module.
func headerOption(sig *types.Signature, pkg *packages.Package, e entry, loaded map[string]*packages.Package) error {
	if e.Request != nil {
		return nil // set on the request, checked above
	}
	n := sig.Params().Len()
	if !sig.Variadic() || n == 0 {
		return fmt.Errorf("key: header %s, but the call takes no request options", e.Key.Header)
	}
	opt := sig.Params().At(n - 1).Type().(*types.Slice).Elem()
	var obj *types.TypeName
	switch o := opt.(type) {
	case *types.Alias:
		obj = o.Obj()
	case *types.Named:
		obj = o.Obj()
	}
	if obj == nil || obj.Pkg() == nil {
		return fmt.Errorf("key: header %s, but the options are %s", e.Key.Header, opt)
	}
	optPkg, ok := loaded[obj.Pkg().Path()]
	if !ok {
		return fmt.Errorf("key: header %s, but the options' package %s is not loaded", e.Key.Header, obj.Pkg().Path())
	}
	if pkg.Module == nil || optPkg.Module == nil || optPkg.Module.Path != pkg.Module.Path {
		return fmt.Errorf("key: header %s, but the options' package %s is not of the module of %s", e.Key.Header, optPkg.PkgPath, pkg.PkgPath)
	}
	with, ok := optPkg.Types.Scope().Lookup("WithHeader").(*types.Func)
	if !ok {
		return fmt.Errorf("key: header %s, but %s has no WithHeader", e.Key.Header, optPkg.PkgPath)
	}
	ws := with.Signature()
	if ws.Params().Len() != 2 || ws.Results().Len() != 1 || !types.AssignableTo(ws.Results().At(0).Type(), opt) {
		return fmt.Errorf("key: header %s, but %s.WithHeader(name, value) does not return a %s", e.Key.Header, optPkg.PkgPath, opt)
	}
	return nil
}
