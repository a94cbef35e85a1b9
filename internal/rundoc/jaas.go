package rundoc

import (
	"fmt"
	"strings"
)

// This file holds a small parser for the JAAS text Kafka clients put in
// sasl.jaas.config: RedactProps hides the secret options in it, and
// internal/kafkasec reads a login's credentials from it. For example:
//
//	org.apache.kafka.common.security.plain.PlainLoginModule required username="alice" password="secret";
//
// Grammar (one or more entries):
//
//	entry  = class flag { name "=" value } ";"
//	value  = word | "double-quoted" | 'single-quoted'
//
// Quoted values understand backslash escapes (\n \t \r \b \f \a \v, octal
// \NNN, and \<c> meaning c, so \" \' \\ work). Comments (// to end of line and
// /* ... */) are allowed between tokens. The trailing ";" of the last entry
// may be omitted. Parse errors only ever report an offset and what was
// expected, never the text around it, because that text may be a password.

// JAASOption is one name=value pair of a login module entry.
type JAASOption struct {
	Name  string
	Value string // unquoted, escapes resolved
	// Start and End delimit the raw value token in the input (quotes
	// included), so RedactProps can replace exactly that span.
	Start, End int
}

// JAASEntry is one login module entry.
type JAASEntry struct {
	Module  string
	Flag    string
	Options []JAASOption
}

// Option returns the values of every option called name (exact match).
func (e JAASEntry) Option(name string) []string {
	var out []string
	for _, o := range e.Options {
		if o.Name == name {
			out = append(out, o.Value)
		}
	}
	return out
}

// JAASSyntaxError describes malformed JAAS text without quoting it.
type JAASSyntaxError struct {
	Offset int
	Msg    string
}

func (e *JAASSyntaxError) Error() string {
	return fmt.Sprintf("malformed JAAS configuration at offset %d: %s", e.Offset, e.Msg)
}

type jaasTokKind int

const (
	tokEOF jaasTokKind = iota
	tokWord
	tokQuoted
	tokEquals
	tokSemicolon
)

type jaasToken struct {
	kind       jaasTokKind
	text       string // word text or unescaped quoted text
	start, end int
}

type jaasLexer struct {
	s   string
	pos int
}

func isJAASSpace(b byte) bool { return b <= ' ' || b == 0x7f }

// skip consumes whitespace and comments.
func (l *jaasLexer) skip() error {
	for l.pos < len(l.s) {
		switch b := l.s[l.pos]; {
		case isJAASSpace(b):
			l.pos++
		case strings.HasPrefix(l.s[l.pos:], "//"):
			nl := strings.IndexAny(l.s[l.pos:], "\n\r")
			if nl < 0 {
				l.pos = len(l.s)
			} else {
				l.pos += nl
			}
		case strings.HasPrefix(l.s[l.pos:], "/*"):
			end := strings.Index(l.s[l.pos+2:], "*/")
			if end < 0 {
				return &JAASSyntaxError{Offset: l.pos, Msg: "unterminated /* comment"}
			}
			l.pos += 2 + end + 2
		default:
			return nil
		}
	}
	return nil
}

func (l *jaasLexer) next() (jaasToken, error) {
	if err := l.skip(); err != nil {
		return jaasToken{}, err
	}
	start := l.pos
	if l.pos >= len(l.s) {
		return jaasToken{kind: tokEOF, start: start, end: start}, nil
	}
	switch b := l.s[l.pos]; b {
	case '=':
		l.pos++
		return jaasToken{kind: tokEquals, start: start, end: l.pos}, nil
	case ';':
		l.pos++
		return jaasToken{kind: tokSemicolon, start: start, end: l.pos}, nil
	case '"', '\'':
		text, err := l.quoted(b)
		if err != nil {
			return jaasToken{}, err
		}
		return jaasToken{kind: tokQuoted, text: text, start: start, end: l.pos}, nil
	}
	for l.pos < len(l.s) {
		b := l.s[l.pos]
		if isJAASSpace(b) || b == '=' || b == ';' || b == '"' || b == '\'' {
			break
		}
		l.pos++
	}
	return jaasToken{kind: tokWord, text: l.s[start:l.pos], start: start, end: l.pos}, nil
}

// quoted reads a quoted string starting at l.pos (the opening quote).
func (l *jaasLexer) quoted(q byte) (string, error) {
	open := l.pos
	l.pos++
	var sb strings.Builder
	for l.pos < len(l.s) {
		b := l.s[l.pos]
		switch {
		case b == q:
			l.pos++
			return sb.String(), nil
		case b != '\\':
			sb.WriteByte(b)
			l.pos++
			continue
		}
		// Backslash escape.
		l.pos++
		if l.pos >= len(l.s) {
			break
		}
		e := l.s[l.pos]
		l.pos++
		switch e {
		case 'a':
			sb.WriteByte(7)
		case 'b':
			sb.WriteByte('\b')
		case 'f':
			sb.WriteByte('\f')
		case 'n':
			sb.WriteByte('\n')
		case 'r':
			sb.WriteByte('\r')
		case 't':
			sb.WriteByte('\t')
		case 'v':
			sb.WriteByte('\v')
		case '0', '1', '2', '3', '4', '5', '6', '7':
			// Octal like Java's StreamTokenizer: up to three digits
			// when the first is 0-3, otherwise up to two.
			v := int(e - '0')
			maxDigits := 2
			if e <= '3' {
				maxDigits = 3
			}
			for n := 1; n < maxDigits && l.pos < len(l.s) && l.s[l.pos] >= '0' && l.s[l.pos] <= '7'; n++ {
				v = v*8 + int(l.s[l.pos]-'0')
				l.pos++
			}
			sb.WriteRune(rune(v))
		default:
			sb.WriteByte(e)
		}
	}
	return "", &JAASSyntaxError{Offset: open, Msg: "unterminated quoted value"}
}

var jaasFlags = []string{"required", "requisite", "sufficient", "optional"}

// ParseJAAS parses JAAS text into its entries. It never panics and its
// errors never contain input text.
func ParseJAAS(s string) ([]JAASEntry, error) {
	l := &jaasLexer{s: s}
	var entries []JAASEntry
	for {
		tok, err := l.next()
		if err != nil {
			return nil, err
		}
		if tok.kind == tokEOF {
			break
		}
		if tok.kind != tokWord {
			return nil, &JAASSyntaxError{Offset: tok.start, Msg: "expected a login module class name"}
		}
		e := JAASEntry{Module: tok.text}
		if tok, err = l.next(); err != nil {
			return nil, err
		}
		if tok.kind != tokWord || !containsFold(jaasFlags, tok.text) {
			return nil, &JAASSyntaxError{Offset: tok.start, Msg: "expected a control flag (required, requisite, sufficient or optional) after the login module class name"}
		}
		e.Flag = strings.ToLower(tok.text)
		for {
			if tok, err = l.next(); err != nil {
				return nil, err
			}
			if tok.kind == tokSemicolon || tok.kind == tokEOF {
				break
			}
			if tok.kind != tokWord {
				return nil, &JAASSyntaxError{Offset: tok.start, Msg: "expected an option name (or ';' to end the entry)"}
			}
			opt := JAASOption{Name: tok.text}
			if tok, err = l.next(); err != nil {
				return nil, err
			}
			if tok.kind != tokEquals {
				return nil, &JAASSyntaxError{Offset: tok.start, Msg: "expected '=' after an option name (values containing spaces, '=' or ';' must be quoted)"}
			}
			if tok, err = l.next(); err != nil {
				return nil, err
			}
			if tok.kind != tokWord && tok.kind != tokQuoted {
				return nil, &JAASSyntaxError{Offset: tok.start, Msg: "expected an option value after '='"}
			}
			opt.Value, opt.Start, opt.End = tok.text, tok.start, tok.end
			e.Options = append(e.Options, opt)
		}
		entries = append(entries, e)
		if tok.kind == tokEOF {
			break
		}
	}
	if len(entries) == 0 {
		return nil, &JAASSyntaxError{Offset: 0, Msg: "no login module entry found"}
	}
	return entries, nil
}

func containsFold(list []string, s string) bool {
	for _, v := range list {
		if strings.EqualFold(v, s) {
			return true
		}
	}
	return false
}

// redactJAAS replaces the value of every secret option with "[redacted]",
// keeping the rest of the text byte for byte. Text that does not parse is
// replaced as a whole, because the secret cannot be located in it.
func redactJAAS(s string) string {
	entries, err := ParseJAAS(s)
	if err != nil {
		return Redacted
	}
	var sb strings.Builder
	last := 0
	for _, e := range entries {
		for _, o := range e.Options {
			if !SecretName(o.Name) {
				continue
			}
			sb.WriteString(s[last:o.Start])
			sb.WriteString(`"` + Redacted + `"`)
			last = o.End
		}
	}
	sb.WriteString(s[last:])
	return sb.String()
}
