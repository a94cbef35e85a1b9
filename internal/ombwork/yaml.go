package ombwork

import (
	"errors"
	"fmt"
	"math"
	"strings"
	"unicode"

	"github.com/goccy/go-yaml/ast"
	"github.com/goccy/go-yaml/parser"

	"github.com/kbench/kbench/internal/rundoc"
)

// Size caps of the files: OMB's are a few hundred bytes; a driver may
// carry PEM certificates in its properties.
const (
	MaxWorkloadBytes = 64 << 10
	MaxDriverBytes   = 256 << 10
	// maxFields bounds a file's top-level fields, before any is judged.
	maxFields = 100
)

// The API's and the form's fields that hold the files' contents; a
// field error on one of the file's fields is named FieldWorkload + "." +
// the field.
const (
	FieldWorkload = "omb-workload"
	FieldDriver   = "omb-driver"
)

// valueKind is the YAML type of a scalar.
type valueKind int

const (
	kindString valueKind = iota
	kindInt
	kindFloat
	kindBool
	kindNull
)

// value is one top-level field of a file: a scalar, with the line it is
// on for messages.
type value struct {
	line int
	kind valueKind
	str  string
	// num is the integer's value when exact (big is false), the float's
	// otherwise.
	i   int64
	big bool // an integer beyond int64
	f   float64
	b   bool
}

// fields reads a file's top-level mapping of scalars. file is the
// field's prefix (FieldWorkload or FieldDriver). Anything else (a list,
// a nested mapping, an anchor, an alias, a tag, a merge key, several
// documents) is an error: OMB's files hold none, and an alias could make
// a small file expand without bound.
func fields(file string, data []byte, maxBytes int) (map[string]value, error) {
	if len(data) > maxBytes {
		return nil, rundoc.NewFieldError(file, "is %d bytes, more than the %d an OMB file may be", len(data), maxBytes)
	}
	if strings.TrimSpace(string(data)) == "" {
		return nil, rundoc.NewFieldError(file, "is empty")
	}
	f, err := parse(data)
	if err != nil {
		return nil, &rundoc.FieldError{Field: file, Msg: "not YAML: " + firstLine(err.Error())}
	}
	var body ast.Node
	for _, d := range f.Docs {
		if d == nil || d.Body == nil {
			continue
		}
		if _, comment := d.Body.(*ast.CommentGroupNode); comment {
			continue
		}
		if body != nil {
			return nil, rundoc.NewFieldError(file, "holds several YAML documents; an OMB file is one")
		}
		body = d.Body
	}
	var entries []*ast.MappingValueNode
	switch b := body.(type) {
	case *ast.MappingNode:
		entries = b.Values
	case *ast.MappingValueNode:
		entries = []*ast.MappingValueNode{b}
	case nil:
		return nil, rundoc.NewFieldError(file, "is empty")
	default:
		return nil, rundoc.NewFieldError(file, "is not a YAML mapping of fields (got %s)", describe(body))
	}
	if len(entries) > maxFields {
		return nil, rundoc.NewFieldError(file, "has %d fields; an OMB file has a few", len(entries))
	}
	out := map[string]value{}
	for _, e := range entries {
		key, ok := e.Key.(*ast.StringNode)
		if !ok {
			return nil, rundoc.NewFieldError(file, "line %d: a field's name must be plain text, got %s", line(e), describe(e.Key))
		}
		name := key.Value
		if !printableName(name) {
			return nil, rundoc.NewFieldError(file, "line %d: a field's name must be a word", line(e))
		}
		if _, dup := out[name]; dup {
			// The parser refuses duplicates; kept in case it is told not to.
			return nil, rundoc.NewFieldError(file+"."+name, "line %d: given twice", line(e))
		}
		v, err := scalar(e.Value)
		if err != nil {
			return nil, rundoc.NewFieldError(file+"."+name, "line %d: %v", line(e), err)
		}
		v.line = line(e)
		out[name] = v
	}
	return out, nil
}

// parse is the YAML parser, whose panics on malformed input become
// errors: the files come from outside, and no input may bring down the
// server that reads them.
func parse(data []byte) (f *ast.File, err error) {
	defer func() {
		if r := recover(); r != nil {
			f, err = nil, fmt.Errorf("the parser failed: %v", r)
		}
	}()
	return parser.ParseBytes(data, 0)
}

// scalar reads one field's value.
func scalar(n ast.Node) (value, error) {
	switch v := n.(type) {
	case *ast.StringNode:
		return value{kind: kindString, str: v.Value}, nil
	case *ast.LiteralNode:
		if v.Value == nil {
			return value{kind: kindString}, nil
		}
		return value{kind: kindString, str: v.Value.Value}, nil
	case *ast.IntegerNode:
		switch x := v.Value.(type) {
		case int64:
			return value{kind: kindInt, i: x, f: float64(x)}, nil
		case uint64:
			if x <= math.MaxInt64 {
				return value{kind: kindInt, i: int64(x), f: float64(x)}, nil
			}
			return value{kind: kindInt, big: true, f: float64(x)}, nil
		}
		return value{}, errors.New("an integer the parser could not read")
	case *ast.FloatNode:
		return value{kind: kindFloat, f: v.Value}, nil
	case *ast.BoolNode:
		return value{kind: kindBool, b: v.Value}, nil
	case *ast.NullNode:
		return value{kind: kindNull}, nil
	case nil:
		return value{kind: kindNull}, nil
	}
	return value{}, fmt.Errorf("must be a single value, got %s", describe(n))
}

// describe names a node's kind for a message, never its text.
func describe(n ast.Node) string {
	switch n.(type) {
	case *ast.AnchorNode:
		return "an anchor (&), which OMB's files do not use"
	case *ast.AliasNode:
		return "an alias (*), which OMB's files do not use"
	case *ast.TagNode:
		return "a tag (!), which OMB's files do not use"
	case *ast.MergeKeyNode:
		return "a merge key (<<)"
	case *ast.SequenceNode:
		return "a list"
	case *ast.MappingNode, *ast.MappingValueNode:
		return "a mapping"
	case *ast.InfinityNode, *ast.NanNode:
		return "a number that is not finite"
	}
	return "a value of another kind"
}

// line is the line a node starts on, 0 when unknown.
func line(n ast.Node) int {
	if n == nil {
		return 0
	}
	if t := n.GetToken(); t != nil && t.Position != nil {
		return t.Position.Line
	}
	return 0
}

// printableName reports whether s may name a field in a message: a
// word of at most 64 letters, digits, '.', '_' or '-'.
func printableName(s string) bool {
	if s == "" || len(s) > 64 {
		return false
	}
	for _, r := range s {
		if !(r >= 'a' && r <= 'z' || r >= 'A' && r <= 'Z' || r >= '0' && r <= '9' || r == '.' || r == '_' || r == '-') {
			return false
		}
	}
	return true
}

// firstLine is an error's first line: the parser's messages go on with
// the source around the fault, which is the user's own input.
func firstLine(s string) string {
	s, _, _ = strings.Cut(strings.TrimSpace(s), "\n")
	if len(s) > 200 {
		s = s[:200] + "…"
	}
	return s
}

// reader takes a file's fields one by one, each by its Java type,
// recording the first error of each and which fields were read.
type reader struct {
	file   string
	fields map[string]value
	errs   rundoc.FieldErrors
	read   map[string]bool
}

func newReader(file string, fields map[string]value) *reader {
	return &reader{file: file, fields: fields, read: map[string]bool{}}
}

func (r *reader) fail(name string, v value, format string, args ...any) {
	r.errs.Add(r.file+"."+name, "line %d: %s", v.line, fmt.Sprintf(format, args...))
}

// get returns the field's value, ok false when it is absent or null (as
// Jackson leaves a null field at its default).
func (r *reader) get(name string) (value, bool) {
	r.read[name] = true
	v, ok := r.fields[name]
	if !ok || v.kind == kindNull {
		return value{}, false
	}
	return v, true
}

// integer reads a whole number within [lo, hi] (the Java field's type
// bounds it further), def when absent.
func (r *reader) integer(name string, def, lo, hi int64) int64 {
	v, ok := r.get(name)
	switch {
	case !ok:
		return def
	case v.kind != kindInt:
		r.fail(name, v, "must be a whole number, got %s", kindName(v.kind))
	case v.big || v.i < lo || v.i > hi:
		r.fail(name, v, "must be between %d and %d, got %s", lo, hi, numText(v))
	default:
		return v.i
	}
	return def
}

// number reads a number (whole or not) within [lo, hi], def when absent.
func (r *reader) number(name string, def, lo, hi float64) float64 {
	v, ok := r.get(name)
	switch {
	case !ok:
		return def
	case v.kind != kindInt && v.kind != kindFloat:
		r.fail(name, v, "must be a number, got %s", kindName(v.kind))
	case math.IsNaN(v.f) || v.f < lo || v.f > hi:
		r.fail(name, v, "must be between %v and %v, got %s", lo, hi, numText(v))
	default:
		return v.f
	}
	return def
}

// boolean reads true or false, false when absent.
func (r *reader) boolean(name string) bool {
	v, ok := r.get(name)
	if !ok {
		return false
	}
	if v.kind != kindBool {
		r.fail(name, v, "must be true or false, got %s", kindName(v.kind))
		return false
	}
	return v.b
}

// text reads a string; a number or a boolean reads as its text, as
// Jackson coerces a scalar into a String field.
func (r *reader) text(name string) (string, bool) {
	v, ok := r.get(name)
	if !ok {
		return "", false
	}
	switch v.kind {
	case kindString:
		return v.str, true
	case kindInt, kindFloat:
		return numText(v), true
	case kindBool:
		return fmt.Sprint(v.b), true
	}
	return "", false
}

// maxName bounds a file's name: it is shown in the run's notes.
const maxName = 200

// name reads the file's name: one line of text, "" when absent.
func (r *reader) name() string {
	s, ok := r.text("name")
	if !ok {
		return ""
	}
	if len(s) > maxName || strings.ContainsFunc(s, unicode.IsControl) {
		r.fail("name", r.fields["name"], "must be one line of at most %d bytes", maxName)
		return ""
	}
	return strings.TrimSpace(s)
}

// unknown adds an error for every field no getter read: an unknown or
// unsupported field is never ignored.
func (r *reader) unknown(what string) {
	for name, v := range r.fields {
		if !r.read[name] {
			r.fail(name, v, "is not a field of %s that kbench knows", what)
		}
	}
}

func kindName(k valueKind) string {
	switch k {
	case kindString:
		return "text"
	case kindInt:
		return "a whole number"
	case kindFloat:
		return "a number with a fraction"
	case kindBool:
		return "true or false"
	}
	return "nothing"
}

func numText(v value) string {
	if v.kind == kindInt && !v.big {
		return fmt.Sprint(v.i)
	}
	return fmt.Sprint(v.f)
}
