package rundoc

import (
	"bufio"
	"fmt"
	"strings"
)

// ParseProperties reads Java .properties text: key=value, key:value or
// "key value" lines, # and ! comments, and backslash line continuations.
// Unicode escapes are not interpreted: Kafka client configs do not use them.
func ParseProperties(text string) (map[string]string, error) {
	props := map[string]string{}
	sc := bufio.NewScanner(strings.NewReader(text))
	sc.Buffer(make([]byte, 0, 64*1024), 1<<20)
	lineNo := 0
	var pending string
	for sc.Scan() {
		lineNo++
		line := strings.TrimLeft(sc.Text(), " \t\f")
		if pending == "" && (line == "" || line[0] == '#' || line[0] == '!') {
			continue
		}
		// An odd number of trailing backslashes continues the line.
		trailing := len(line) - len(strings.TrimRight(line, `\`))
		if trailing%2 == 1 {
			pending += line[:len(line)-1]
			continue
		}
		line = pending + line
		pending = ""
		key, val := splitProperty(line)
		if key == "" {
			return nil, fmt.Errorf("line %d: missing key in %q", lineNo, line)
		}
		props[key] = val
	}
	if err := sc.Err(); err != nil {
		return nil, fmt.Errorf("line %d: %w", lineNo+1, err)
	}
	if pending != "" {
		key, val := splitProperty(pending)
		if key == "" {
			return nil, fmt.Errorf("line %d: missing key", lineNo)
		}
		props[key] = val
	}
	return props, nil
}

func splitProperty(line string) (key, val string) {
	for i := 0; i < len(line); i++ {
		switch line[i] {
		case '\\':
			i++ // an escaped separator belongs to the key
		case '=', ':', ' ', '\t':
			key = unescapeProp(line[:i])
			rest := strings.TrimLeft(line[i:], " \t")
			if rest != "" && (rest[0] == '=' || rest[0] == ':') && (line[i] == ' ' || line[i] == '\t') {
				rest = rest[1:]
			} else if line[i] == '=' || line[i] == ':' {
				rest = line[i+1:]
			}
			return key, unescapeProp(strings.TrimLeft(rest, " \t"))
		}
	}
	return unescapeProp(line), ""
}

func unescapeProp(s string) string {
	if !strings.Contains(s, `\`) {
		return strings.TrimRight(s, " \t")
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] == '\\' && i+1 < len(s) {
			i++
			switch s[i] {
			case 'n':
				b.WriteByte('\n')
			case 't':
				b.WriteByte('\t')
			default:
				b.WriteByte(s[i])
			}
			continue
		}
		b.WriteByte(s[i])
	}
	return b.String()
}
