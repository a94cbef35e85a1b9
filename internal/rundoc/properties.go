package rundoc

import (
	"bufio"
	"fmt"
	"strconv"
	"strings"
	"unicode/utf16"
	"unicode/utf8"
)

// ParseProperties reads Java .properties text as Properties.load does:
// key=value, key:value or "key value" lines (the key ends at the first
// unescaped '=', ':' or blank), # and ! comments, lines ended by \n, \r
// or \r\n, backslash line continuations (leading blanks of the next line
// dropped), and the escapes \t \n \r \f and \uXXXX (UTF-16: a surrogate
// pair is one character; a lone surrogate reads as U+FFFD, which a Go
// string must hold instead); any other escaped character is itself. A
// malformed \uXXXX is an error naming its line, as it is Java's. Unlike
// Properties.load, a value's unescaped trailing blanks are dropped, as
// Kafka's ConfigDef trims every value it parses.
func ParseProperties(text string) (map[string]string, error) {
	props := map[string]string{}
	// Java ends a line at \r too; Scanner knows \n and \r\n only.
	text = strings.ReplaceAll(strings.ReplaceAll(text, "\r\n", "\n"), "\r", "\n")
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	lineNo, start := 0, 0
	var pending string
	add := func(line string) error {
		key, val, err := splitProperty(line)
		if err != nil {
			return fmt.Errorf("line %d: %w", start, err)
		}
		if key == "" {
			return fmt.Errorf("line %d: missing key in %q", start, line)
		}
		props[key] = val
		return nil
	}
	for sc.Scan() {
		lineNo++
		line := strings.TrimLeft(sc.Text(), blanks)
		if pending == "" {
			if line == "" || line[0] == '#' || line[0] == '!' {
				continue
			}
			start = lineNo
		}
		// An odd number of trailing backslashes continues the line.
		trailing := len(line) - len(strings.TrimRight(line, `\`))
		if trailing%2 == 1 {
			pending += line[:len(line)-1]
			continue
		}
		line = pending + line
		pending = ""
		if err := add(line); err != nil {
			return nil, err
		}
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("line %d: %w", lineNo+1, err)
	}
	if pending != "" {
		if err := add(pending); err != nil {
			return nil, err
		}
	}
	return props, nil
}

// blanks are the characters Java's Properties takes for white space.
const blanks = " \t\f"

func splitProperty(line string) (key, val string, err error) {
	for i := 0; i < len(line); i++ {
		switch line[i] {
		case '\\':
			i++ // an escaped separator belongs to the key
		case '=', ':', ' ', '\t', '\f':
			if key, err = unescapeProp(line[:i]); err != nil {
				return "", "", err
			}
			rest := strings.TrimLeft(line[i:], blanks)
			if rest != "" && (rest[0] == '=' || rest[0] == ':') && strings.ContainsRune(blanks, rune(line[i])) {
				rest = rest[1:]
			} else if line[i] == '=' || line[i] == ':' {
				rest = line[i+1:]
			}
			val, err = unescapeProp(strings.TrimLeft(rest, blanks))
			return key, val, err
		}
	}
	key, err = unescapeProp(line)
	return key, "", err
}

// unescapeProp reads the escapes of s and drops its unescaped trailing
// blanks.
func unescapeProp(s string) (string, error) {
	if !strings.Contains(s, `\`) {
		return strings.TrimRight(s, blanks), nil
	}
	var b strings.Builder
	kept := 0     // b's length up to its last escaped character
	var high rune // a high surrogate waiting for its low half
	flush := func() {
		if high != 0 {
			b.WriteRune(utf8.RuneError)
			high, kept = 0, b.Len()
		}
	}
	for i := 0; i < len(s); i++ {
		if s[i] != '\\' || i+1 == len(s) {
			flush()
			b.WriteByte(s[i])
			continue
		}
		i++
		if s[i] != 'u' {
			flush()
			switch s[i] {
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			case 'r':
				b.WriteByte('\r')
			case 'f':
				b.WriteByte('\f')
			default:
				b.WriteByte(s[i])
			}
			kept = b.Len()
			continue
		}
		if i+5 > len(s) {
			return "", fmt.Errorf("malformed \\uXXXX escape %q: want four hex digits", s[i-1:min(len(s), i+5)])
		}
		u, err := strconv.ParseUint(s[i+1:i+5], 16, 16)
		if err != nil {
			return "", fmt.Errorf("malformed \\uXXXX escape %q: want four hex digits", s[i-1:i+5])
		}
		i += 4
		r := rune(u)
		switch {
		case utf16.IsSurrogate(r) && r < 0xdc00: // high half
			flush()
			high = r
			continue
		case utf16.IsSurrogate(r) && high != 0: // low half after a high one
			r = utf16.DecodeRune(high, r)
			high = 0
		default:
			flush()
		}
		b.WriteRune(r) // a lone low surrogate is written as U+FFFD
		kept = b.Len()
	}
	flush()
	out := b.String()
	return out[:kept] + strings.TrimRight(out[kept:], blanks), nil
}
