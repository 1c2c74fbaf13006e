package sdktest_test

import (
	"encoding/json"
	"fmt"
	"go/types"
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
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
		e := entry{Func: tr.Func}
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

var major = regexp.MustCompile(`/v[0-9]+(/|$)`)

// resolve names the package an entry is checked against: the package it names where the
// test imports that one, or else the same package at the major version the test imports
// (the catalogue's names match every major version of a module).
func resolve(path string, loaded map[string]*packages.Package) (*packages.Package, bool) {
	if p, ok := loaded[path]; ok {
		return p, true
	}
	want := catalog.Normalize(path)
	var found []*packages.Package
	for p, pkg := range loaded {
		if catalog.Normalize(p) == want {
			found = append(found, pkg)
		}
	}
	if len(found) == 0 {
		return nil, false
	}
	// The newest major version: the longest, then greatest path.
	slices.SortFunc(found, func(a, b *packages.Package) int {
		if c := len(b.PkgPath) - len(a.PkgPath); c != 0 {
			return c
		}
		return strings.Compare(b.PkgPath, a.PkgPath)
	})
	return found[0], true
}

// Every function, method, argument, key field, setter and header option the catalogue
// names exists in the SDK it names, at the version this module requires.
func TestCatalogue_NamesExistInTheRealSDKs(t *testing.T) {
	entries := readCatalogue(t)
	// The packages this module imports (sdks_test.go), loaded with their types.
	cfg := &packages.Config{Mode: packages.NeedName | packages.NeedTypes | packages.NeedImports | packages.NeedDeps, Tests: true}
	pkgs, err := packages.Load(cfg, ".")
	if err != nil {
		t.Fatal(err)
	}
	loaded := map[string]*packages.Package{}
	packages.Visit(pkgs, nil, func(p *packages.Package) {
		if len(p.Errors) > 0 {
			t.Errorf("%s: %v", p.PkgPath, p.Errors)
		}
		loaded[p.PkgPath] = p
	})
	if len(loaded) < 100 {
		t.Fatalf("loaded %d packages: the SDKs are missing", len(loaded))
	}

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
	full := e.Func
	wildcard := strings.HasSuffix(full, ".*")
	if wildcard {
		full = strings.TrimSuffix(full, ".*")
	}
	if wildcard {
		if _, ok := resolve(full, loaded); !ok {
			return fmt.Errorf("package %s is not imported by the test module", full)
		}
		return nil
	}
	path, recv, name, err := splitName(full)
	if err != nil {
		return err
	}
	pkg, ok := resolve(path, loaded)
	if !ok {
		return fmt.Errorf("package %s is not imported by the test module", path)
	}
	var fn *types.Func
	if recv == "" {
		obj := pkg.Types.Scope().Lookup(name)
		f, ok := obj.(*types.Func)
		if !ok {
			return fmt.Errorf("%s has no function %s", pkg.PkgPath, name)
		}
		fn = f
	} else {
		tn, ok := pkg.Types.Scope().Lookup(recv).(*types.TypeName)
		if !ok {
			return fmt.Errorf("%s has no type %s", pkg.PkgPath, recv)
		}
		obj, _, _ := types.LookupFieldOrMethod(types.NewPointer(tn.Type()), true, pkg.Types, name)
		f, ok := obj.(*types.Func)
		if !ok {
			return fmt.Errorf("%s.%s has no method %s", pkg.PkgPath, recv, name)
		}
		fn = f
	}
	sig := fn.Signature()
	if e.Request != nil {
		if err := isRequest(sig, e.Request.Arg); err != nil {
			return fmt.Errorf("request: %w", err)
		}
	}
	if e.Key == nil {
		return nil
	}
	if e.Key.Header != "" {
		return headerOption(sig, e, loaded)
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

// param returns the type of argument i, the receiver not counted; the last parameter of a
// variadic function stands for every argument from its index on.
func param(sig *types.Signature, i int) (types.Type, error) {
	n := sig.Params().Len()
	switch {
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

func isRequest(sig *types.Signature, i int) error {
	t, err := param(sig, i)
	if err != nil {
		return err
	}
	if types.TypeString(t, nil) != "*net/http.Request" {
		return fmt.Errorf("argument %d is %s, not *net/http.Request", i, t)
	}
	return nil
}

// headerOption checks that a header key can be passed the way the catalogue says it is:
// on the *http.Request the call sends, or with the SDK's option.WithHeader among the
// call's variadic request options.
func headerOption(sig *types.Signature, e entry, loaded map[string]*packages.Package) error {
	if e.Request != nil {
		return nil // set on the request, checked above
	}
	n := sig.Params().Len()
	if !sig.Variadic() || n == 0 {
		return fmt.Errorf("key: header %s, but the call takes no request options", e.Key.Header)
	}
	opt := sig.Params().At(n - 1).Type().(*types.Slice).Elem()
	named, ok := opt.(*types.Named)
	if !ok || named.Obj().Pkg() == nil {
		return fmt.Errorf("key: header %s, but the options are %s", e.Key.Header, opt)
	}
	optPkg, ok := loaded[named.Obj().Pkg().Path()]
	if !ok {
		return fmt.Errorf("key: header %s, but the options' package %s is not loaded", e.Key.Header, named.Obj().Pkg().Path())
	}
	with, ok := optPkg.Types.Scope().Lookup("WithHeader").(*types.Func)
	if !ok {
		return fmt.Errorf("key: header %s, but %s has no WithHeader", e.Key.Header, optPkg.PkgPath)
	}
	if res := with.Signature().Results(); res.Len() != 1 || !types.AssignableTo(res.At(0).Type(), opt) {
		return fmt.Errorf("key: header %s, but %s.WithHeader does not return a %s", e.Key.Header, optPkg.PkgPath, opt)
	}
	return nil
}
