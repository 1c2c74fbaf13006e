package directive

import (
	"go/ast"
	"go/parser"
	"go/scanner"
	"go/token"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode"
)

// ParseFile finds, parses and validates every //once: directive in f, whose package is
// f.Name. It returns the valid directives in source order, and every mistake found. A
// directive with any mistake is left out of the first result, so a caller generating code
// from it can refuse the whole file by checking the second.
func ParseFile(fset *token.FileSet, f *ast.File) ([]*Directive, []*Error) {
	p := &fileParser{fset: fset, pkg: f.Name.Name, docOf: map[*ast.CommentGroup]string{}}
	funcs := map[*ast.CommentGroup]*ast.FuncDecl{}
	for _, decl := range f.Decls {
		switch d := decl.(type) {
		case *ast.FuncDecl:
			if d.Doc != nil {
				funcs[d.Doc] = d
			}
		case *ast.GenDecl:
			what := d.Tok.String()
			p.docOf[d.Doc] = what
			for _, spec := range d.Specs {
				switch s := spec.(type) {
				case *ast.TypeSpec:
					p.docOf[s.Doc] = what
				case *ast.ValueSpec:
					p.docOf[s.Doc] = what
				case *ast.ImportSpec:
					p.docOf[s.Doc] = what
				}
			}
		}
	}
	p.docOf[f.Doc] = "package clause"

	var out []*Directive
	first := map[*ast.FuncDecl]*Directive{}
	for _, g := range f.Comments {
		fn := funcs[g]
		for _, c := range g.List {
			if !strings.HasPrefix(c.Text, Prefix) {
				p.checkSpaced(c)
				continue
			}
			if fn == nil {
				p.notOnFunc(g, c)
				continue
			}
			d := p.parse(c, fn)
			if d == nil {
				continue
			}
			if prev, ok := first[fn]; ok {
				p.errorf(c.Slash, "a second //once: directive on %s (//once:%s is at line %d): a function keeps one promise; remove one",
					d.FuncName(), prev.Kind, prev.Position.Line)
				continue
			}
			first[fn] = d
			out = append(out, d)
		}
	}
	// A function whose first directive was invalid still must not get a second one silently.
	return p.dropDoubled(out), p.errs
}

type fileParser struct {
	fset  *token.FileSet
	pkg   string
	docOf map[*ast.CommentGroup]string // doc comment → what it documents, for non-functions
	errs  []*Error
	// bad records functions with an invalid directive, so a valid second one is still
	// reported as a second directive.
	bad map[*ast.FuncDecl]token.Pos
}

func (p *fileParser) errorf(pos token.Pos, format string, args ...any) {
	p.errs = append(p.errs, errorf(p.fset, pos, format, args...))
}

// dropDoubled reports a valid directive on a function that already had an invalid one.
func (p *fileParser) dropDoubled(ds []*Directive) []*Directive {
	out := ds[:0]
	for _, d := range ds {
		if first, ok := p.bad[d.Func]; ok && first < d.Slash {
			p.errorf(d.Slash, "a second //once: directive on %s (another is at line %d): a function keeps one promise; remove one",
				d.FuncName(), p.fset.Position(first).Line)
			continue
		}
		out = append(out, d)
	}
	slices.SortStableFunc(p.errs, func(a, b *Error) int { return int(a.Pos) - int(b.Pos) })
	return out
}

// checkSpaced reports "// once:kind", which reads as a directive but is a plain comment.
func (p *fileParser) checkSpaced(c *ast.Comment) {
	rest, ok := strings.CutPrefix(c.Text, "// once:")
	if !ok {
		return
	}
	word, _, _ := strings.Cut(rest, " ")
	if Kind(word).Rank() >= 0 {
		p.errorf(c.Slash, "write //once:%s with no space after //: as written it is a plain comment and guards nothing", word)
	}
}

func (p *fileParser) notOnFunc(g *ast.CommentGroup, c *ast.Comment) {
	what := strings.TrimSpace(strings.TrimPrefix(c.Text, Prefix))
	what, _, _ = strings.Cut(what, " ")
	if on, ok := p.docOf[g]; ok {
		p.errorf(c.Slash, "//once:%s is on a %s declaration, not a function: put it in the doc comment of the function whose effect it guards", what, on)
		return
	}
	p.errorf(c.Slash, "//once:%s is not in a function's doc comment: put it on the lines just above the func whose effect it guards", what)
}

// parse parses and validates one directive line on fn; it returns nil after reporting
// mistakes.
func (p *fileParser) parse(c *ast.Comment, fn *ast.FuncDecl) *Directive {
	d := &Directive{Slash: c.Slash, Position: p.fset.Position(c.Slash), Text: c.Text, Func: fn, Package: p.pkg}
	nerr := len(p.errs)
	defer func() {
		if len(p.errs) > nerr {
			if p.bad == nil {
				p.bad = map[*ast.FuncDecl]token.Pos{}
			}
			if _, ok := p.bad[fn]; !ok {
				p.bad[fn] = c.Slash
			}
		}
	}()
	dir, ok := ast.ParseDirective(c.Slash, c.Text)
	name := dir.Name
	if !ok || dir.Tool != "once" {
		// ParseDirective refuses a kind that does not start with a lower-case letter or
		// digit; name it all the same.
		name = strings.TrimPrefix(c.Text, Prefix)
		if i := strings.IndexFunc(name, unicode.IsSpace); i >= 0 {
			name = name[:i]
		}
	}
	if name == "" {
		p.errorf(c.Slash, "//once: needs a kind right after the colon: one of %s", kindList())
		return nil
	}
	d.Kind = Kind(name)
	spec := SpecOf(d.Kind)
	if spec == nil || !ok {
		namePos := c.Slash + token.Pos(len(Prefix))
		if n := nearest(strings.ToLower(name), kindStrings()); n != "" {
			p.errorf(namePos, "unknown kind %q: did you mean //once:%s? (kinds: %s)", name, n, kindList())
		} else {
			p.errorf(namePos, "unknown kind %q (kinds: %s)", name, kindList())
		}
		return nil
	}
	raw, err := dir.ParseArgs()
	if err != nil {
		pos := dir.ArgsPos
		if i := strings.LastIndex(err.Error(), ": "); i >= 0 {
			if rest := err.Error()[i+2:]; strings.HasSuffix(dir.Args, rest) {
				pos += token.Pos(len(dir.Args) - len(rest))
			}
		}
		p.errorf(pos, "//once:%s: unterminated or misplaced quote: quote a whole argument, as in \"key=a, b\"", d.Kind)
		return nil
	}

	// Split arg=value, find repeats, and choose the form.
	seen := map[string]Arg{}
	for _, r := range raw {
		name, value, hasEq := strings.Cut(r.Arg, "=")
		quoted := c.Text[p.offset(c, r.Pos)] == '"' || c.Text[p.offset(c, r.Pos)] == '`'
		a := Arg{Name: name, Value: value, Pos: r.Pos, ValuePos: r.Pos + token.Pos(len(name)+1)}
		if quoted {
			a.ValuePos++
		}
		switch {
		case !hasEq || name == "":
			p.errorf(r.Pos, "//once:%s: %q is not an arg=value argument (arguments: %s)", d.Kind, r.Arg, strings.Join(argNames(d.Kind), ", "))
			continue
		case value == "":
			p.errorf(r.Pos, "//once:%s: %s= has no value", d.Kind, name)
			continue
		}
		if prev, dup := seen[name]; dup {
			p.errorf(r.Pos, "//once:%s: %s= given twice (first at column %d): give it once", d.Kind, name, p.fset.Position(prev.Pos).Column)
			continue
		}
		seen[name] = a
		d.Args = append(d.Args, a)
	}
	table := false
	f := spec.key
	if _, ok := seen["table"]; ok {
		table = true
		if spec.Table == nil {
			p.errorf(seen["table"].Pos, "//once:%s has no table= form (kinds with one: %s)", d.Kind, strings.Join(kindsWithTable(), ", "))
			return nil
		}
		f = spec.Table.form
	}
	allowed := f.args

	for _, a := range d.Args {
		s, ok := allowed[a.Name]
		if !ok {
			p.unknownArg(d.Kind, a, table)
			continue
		}
		p.setValue(d, a, s)
	}
	if len(p.errs) > nerr {
		// A malformed argument is often the required one misspelt: say it once.
		return nil
	}
	for _, name := range f.required {
		if _, ok := seen[name]; !ok {
			s := allowed[name]
			p.errorf(c.Slash, "//once:%s on %s: missing %s= (for example %s)", d.Kind, d.FuncName(), name, s.example)
		}
	}
	if len(p.errs) > nerr {
		return nil
	}
	if !d.NameSet {
		d.Name = p.pkg + "." + d.FuncName()
	}
	for name, s := range allowed {
		if _, ok := seen[name]; !ok && s.byDefault != nil {
			s.byDefault(d)
		}
	}
	return d
}

// offset is the byte offset of pos within the comment c.
func (p *fileParser) offset(c *ast.Comment, pos token.Pos) int { return int(pos - c.Slash) }

func (p *fileParser) unknownArg(k Kind, a Arg, table bool) {
	spec := SpecOf(k)
	switch {
	case table && a.Name == "key":
		p.errorf(a.Pos, "//once:%s: key= and table= exclude each other: with table=, name the key columns with columns=", k)
		return
	case !table && spec.tableArgs()[a.Name].example != "":
		p.errorf(a.Pos, "//once:%s: %s= needs table= (it names part of the table the function inserts into)", k, a.Name)
		return
	case table && spec.key.args[a.Name].example != "":
		p.errorf(a.Pos, "//once:%s: %s= does not apply with table=: the promise lives on the table's rows and index", k, a.Name)
		return
	}
	if others := kindsTaking(a.Name); len(others) > 0 {
		p.errorf(a.Pos, "//once:%s takes no %s= argument (%s does; arguments of %s: %s)", k, a.Name, strings.Join(others, ", "), k, strings.Join(argNames(k), ", "))
		return
	}
	if n := nearest(a.Name, argNames(k)); n != "" {
		p.errorf(a.Pos, "//once:%s: unknown argument %s=: did you mean %s=? (arguments: %s)", k, a.Name, n, strings.Join(argNames(k), ", "))
		return
	}
	p.errorf(a.Pos, "//once:%s: unknown argument %s= (arguments: %s)", k, a.Name, strings.Join(argNames(k), ", "))
}

var (
	guardNameRE = regexp.MustCompile(`^[A-Za-z0-9_.:/-]+$`)
	wordRE      = regexp.MustCompile(`^[A-Za-z0-9_.:-]+$`)
)

// MaxNameLen is the longest guard name, in bytes (the runtime's limit).
const MaxNameLen = 128

// setValue checks a's value against s and stores it in d.
func (p *fileParser) setValue(d *Directive, a Arg, s argSpec) {
	bad := func(format string, args ...any) {
		p.errorf(a.ValuePos, "//once:%s: %s=%s: "+format, append([]any{d.Kind, a.Name, a.Value}, args...)...)
	}
	v := a.Value
	var val value
	switch s.typ {
	case exprList:
		exprs, ok := p.exprs(d.Kind, a)
		if !ok {
			return
		}
		val.exprs = exprs
	case expr:
		exprs, ok := p.exprs(d.Kind, a)
		if !ok {
			return
		}
		if len(exprs) != 1 {
			bad("give one expression (to combine several, put them in key=)")
			return
		}
		val.exprs = exprs
	case intOrExpr, intLit:
		if looksNumeric(v) {
			i, err := strconv.ParseInt(v, 10, 64)
			if err != nil || i <= 0 {
				bad("must be a positive integer")
				return
			}
			val.num = IntOrExpr{IsLit: true, Lit: i}
		} else if s.typ == intLit {
			bad("must be an integer literal here (it is written into the table's SQL)")
			return
		} else {
			exprs, ok := p.exprs(d.Kind, a)
			if !ok {
				return
			}
			if len(exprs) != 1 {
				bad("give one integer expression")
				return
			}
			val.num = IntOrExpr{Expr: exprs[0]}
		}
	case duration:
		t, err := time.ParseDuration(v)
		switch {
		case err != nil:
			bad("not a duration (write it like 10s, 5m or 24h)")
			return
		case t <= 0:
			bad("must be a positive duration")
			return
		}
		val.dur = t
	case boolean:
		if v != "true" && v != "false" {
			bad("must be true or false")
			return
		}
		val.yes = v == "true"
	case tableName:
		if msg := checkTable(v); msg != "" {
			bad("%s", msg)
			return
		}
		val.text = v
	case ident:
		if msg := checkIdent(v); msg != "" {
			bad("%s", msg)
			return
		}
		val.text = v
	case identList:
		cols := strings.Split(v, ",")
		for _, col := range cols {
			if msg := checkIdent(col); msg != "" {
				bad("column %q: %s", col, msg)
				return
			}
		}
		if dup := firstRepeat(cols); dup != "" {
			bad("column %s is listed twice", dup)
			return
		}
		val.words = cols
	case wordList:
		words := strings.Split(v, ",")
		for _, w := range words {
			if !wordRE.MatchString(w) {
				bad("%q is not a plain value (letters, digits, _ . : - only)", w)
				return
			}
		}
		if dup := firstRepeat(words); dup != "" {
			bad("%s is listed twice", dup)
			return
		}
		val.words = words
	case guardName:
		if !guardNameRE.MatchString(v) || len(v) > MaxNameLen {
			bad("a guard name is letters, digits and _ . : / - only, at most %d bytes", MaxNameLen)
			return
		}
		val.text = v
	case word:
		if !wordRE.MatchString(v) || len(v) > 64 {
			bad("a prefix is letters, digits and _ . : - only, at most 64 bytes")
			return
		}
		val.text = v
	case enum:
		choices := strings.Split(s.only, "|")
		if !slices.Contains(choices, v) {
			if len(choices) == 1 {
				bad("the only value is %s=%s", a.Name, s.only)
			} else {
				bad("must be one of %s", strings.Join(choices, ", "))
			}
			return
		}
		val.yes, val.text = true, v
	}
	s.set(d, val)
}

func looksNumeric(v string) bool {
	return v != "" && (v[0] >= '0' && v[0] <= '9' || v[0] == '-' || v[0] == '+')
}

func firstRepeat(list []string) string {
	seen := map[string]bool{}
	for _, s := range list {
		if seen[s] {
			return s
		}
		seen[s] = true
	}
	return ""
}

// exprs splits a's value into Go expressions at its top-level commas and checks that each
// parses.
func (p *fileParser) exprs(k Kind, a Arg) ([]Expr, bool) {
	parts, ok := splitTopLevel(a.Value)
	if !ok {
		p.errorf(a.ValuePos, "//once:%s: %s=%s: unbalanced brackets or quotes", k, a.Name, a.Value)
		return nil, false
	}
	var out []Expr
	for _, part := range parts {
		text := strings.TrimSpace(part.text)
		pos := a.ValuePos + token.Pos(part.offset+strings.Index(part.text, text))
		if text == "" {
			p.errorf(pos, "//once:%s: %s= has an empty expression", k, a.Name)
			return nil, false
		}
		if _, err := parser.ParseExpr(text); err != nil {
			epos, msg := pos, err.Error()
			if list, ok := err.(scanner.ErrorList); ok && len(list) > 0 {
				epos += token.Pos(list[0].Pos.Column - 1)
				msg = list[0].Msg
			}
			p.errorf(epos, "//once:%s: %s=: %q is not a Go expression: %s", k, a.Name, text, msg)
			return nil, false
		}
		out = append(out, Expr{Text: text, Pos: pos})
	}
	return out, true
}

type part struct {
	text   string
	offset int
}

// splitTopLevel splits s at commas outside brackets and string or rune literals.
func splitTopLevel(s string) ([]part, bool) {
	var parts []part
	depth, start := 0, 0
	for i := 0; i < len(s); i++ {
		switch c := s[i]; c {
		case '(', '[', '{':
			depth++
		case ')', ']', '}':
			depth--
			if depth < 0 {
				return nil, false
			}
		case '"', '\'', '`':
			j := i + 1
			for ; j < len(s) && s[j] != c; j++ {
				if s[j] == '\\' && c != '`' {
					j++
				}
			}
			if j >= len(s) {
				return nil, false
			}
			i = j
		case ',':
			if depth == 0 {
				parts = append(parts, part{s[start:i], start})
				start = i + 1
			}
		}
	}
	if depth != 0 {
		return nil, false
	}
	return append(parts, part{s[start:], start}), true
}

func kindStrings() []string {
	s := make([]string, len(Kinds))
	for i, k := range Kinds {
		s[i] = string(k)
	}
	return s
}

func kindList() string { return strings.Join(kindStrings(), ", ") }

// kindsWithTable returns the kinds that have a table= form, in Kinds order.
func kindsWithTable() []string {
	var ks []string
	for _, s := range specs {
		if s.Table != nil {
			ks = append(ks, string(s.Kind))
		}
	}
	return ks
}
