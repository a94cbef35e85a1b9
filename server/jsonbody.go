package server

import (
	"bytes"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"reflect"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"

	"github.com/gin-gonic/gin"
)

// decodeJSON reads a JSON request body into v, strictly: the body is one
// JSON object and nothing after it; every string (keys included) is valid
// UTF-8 with no lone surrogate escape, since encoding/json would silently
// turn either into U+FFFD; no key appears twice in an object (encoding/json
// would keep the last); unknown fields, wrong types and malformed JSON are
// input errors naming the field by its path ("params.topic", "runs[2]") or
// "body", in JSON's words rather than Go's. A body over the limit stays a
// *http.MaxBytesError (413).
func decodeJSON(c *gin.Context, v any) error {
	body, err := io.ReadAll(c.Request.Body)
	if err != nil {
		var mbe *http.MaxBytesError
		if errors.As(err, &mbe) {
			return err
		}
		return badInput("body", "could not be read: %v", err)
	}
	if err := checkJSONBody(body); err != nil {
		return err
	}
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.DisallowUnknownFields()
	err = dec.Decode(v)
	var ute *json.UnmarshalTypeError
	var se *json.SyntaxError
	switch {
	case err == nil:
		return nil
	case errors.As(err, &ute):
		field := ute.Field
		if field == "" {
			field = "body"
		}
		return badInput(field, "must be %s", jsonKind(ute.Type))
	case strings.HasPrefix(err.Error(), "json: unknown field "):
		name := strings.TrimPrefix(err.Error(), "json: unknown field ")
		if name != `""` {
			name = strings.Trim(name, `"`)
		}
		return badInput(name, "unknown field")
	case errors.As(err, &se):
		return badInput("body", "invalid JSON at byte %d: %s", se.Offset, strings.TrimPrefix(se.Error(), "json: "))
	}
	// checkJSONBody has seen the syntax and the shape: what is left would
	// only name Go types.
	return badInput("body", "does not match the request's fields")
}

// jsonKind names what a Go type accepts, in JSON's words.
func jsonKind(t reflect.Type) string {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	switch t.Kind() {
	case reflect.String:
		return "a string"
	case reflect.Bool:
		return "true or false"
	case reflect.Int, reflect.Int8, reflect.Int16, reflect.Int32, reflect.Int64:
		return "a whole number"
	case reflect.Uint, reflect.Uint8, reflect.Uint16, reflect.Uint32, reflect.Uint64:
		return "a whole number ≥ 0"
	case reflect.Float32, reflect.Float64:
		return "a number"
	case reflect.Slice, reflect.Array:
		return "a list"
	case reflect.Map, reflect.Struct:
		return "an object"
	}
	return "of another type"
}

// jsonFrame is an object or array being walked by checkJSONBody.
type jsonFrame struct {
	path    string
	object  bool
	index   int             // arrays: the next element's index
	key     string          // objects: the current key
	wantKey bool            // objects: the next string is a key
	keys    map[string]bool // objects: the keys seen
}

// child is the path of the frame's current value.
func (f *jsonFrame) child() string {
	if !f.object {
		return f.path + "[" + strconv.Itoa(f.index) + "]"
	}
	key := f.key
	if key == "" {
		key = `""` // the empty key, named so that the path is never empty
	}
	if f.path == "" {
		return key
	}
	return f.path + "." + key
}

// done moves past the frame's current value.
func (f *jsonFrame) done() {
	if f.object {
		f.wantKey = true
	} else {
		f.index++
	}
}

// checkJSONBody walks a request body token by token: one object, nothing
// after it, valid UTF-8 in every string, no duplicate key.
func checkJSONBody(body []byte) error {
	dec := json.NewDecoder(bytes.NewReader(body))
	dec.UseNumber()
	syntax := func(err error) error {
		var se *json.SyntaxError
		if errors.As(err, &se) {
			return badInput("body", "invalid JSON at byte %d: %s", se.Offset, strings.TrimPrefix(se.Error(), "json: "))
		}
		if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
			return badInput("body", "invalid JSON: ends before the object does")
		}
		return badInput("body", "invalid JSON")
	}
	tok, err := dec.Token()
	switch {
	case errors.Is(err, io.EOF):
		return badInput("body", "empty; send a JSON object")
	case err != nil:
		return syntax(err)
	case tok != json.Delim('{'):
		return badInput("body", "must be a JSON object")
	}
	stack := []*jsonFrame{{object: true, wantKey: true, keys: map[string]bool{}}}
	for len(stack) > 0 {
		start := dec.InputOffset()
		tok, err := dec.Token()
		if err != nil {
			return syntax(err)
		}
		top := stack[len(stack)-1]
		switch t := tok.(type) {
		case json.Delim:
			switch t {
			case '{', '[':
				stack = append(stack, &jsonFrame{path: top.child(), object: t == '{', wantKey: t == '{', keys: map[string]bool{}})
			default: // '}' or ']': the tokenizer has checked that they match
				stack = stack[:len(stack)-1]
				if len(stack) > 0 {
					stack[len(stack)-1].done()
				}
			}
		case string:
			lit := body[start:dec.InputOffset()]
			lit = lit[bytes.IndexByte(lit, '"'):]
			if top.object && top.wantKey {
				if why := badJSONString(lit); why != "" {
					where := top.path
					if where == "" {
						where = "body"
					}
					return badInput(where, "a key %s", why)
				}
				top.key, top.wantKey = t, false
				if top.keys[t] {
					return badInput(top.child(), "appears twice")
				}
				top.keys[t] = true
				continue
			}
			if why := badJSONString(lit); why != "" {
				return badInput(top.child(), "%s", why)
			}
			top.done()
		default:
			top.done()
		}
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return badInput("body", "has data after the JSON object; send one object")
	}
	return nil
}

// badJSONString says what is wrong with a JSON string literal (quotes
// included, syntax already checked), "" when nothing is: invalid UTF-8 or
// an unpaired surrogate escape, the two things encoding/json would
// silently replace with U+FFFD.
func badJSONString(lit []byte) string {
	const unpaired = "is not valid UTF-8 (an unpaired surrogate escape)"
	lit = lit[1 : len(lit)-1]
	hex := func(b []byte) rune {
		n, _ := strconv.ParseUint(string(b), 16, 32) // four hex digits: the tokenizer checked
		return rune(n)
	}
	for i := 0; i < len(lit); {
		switch c := lit[i]; {
		case c == '\\' && lit[i+1] == 'u':
			r := hex(lit[i+2 : i+6])
			i += 6
			if !utf16.IsSurrogate(r) {
				continue
			}
			if r >= 0xdc00 || i+6 > len(lit) || lit[i] != '\\' || lit[i+1] != 'u' {
				return unpaired // a low surrogate first, or a high one alone
			}
			if lo := hex(lit[i+2 : i+6]); lo < 0xdc00 || lo > 0xdfff {
				return unpaired
			}
			i += 6
		case c == '\\':
			i += 2
		case c < utf8.RuneSelf:
			i++
		default:
			r, size := utf8.DecodeRune(lit[i:])
			if r == utf8.RuneError && size == 1 {
				return "is not valid UTF-8"
			}
			i += size
		}
	}
	return ""
}
