package targets

import (
	"regexp"
	"strings"
	"testing"
)

// FuzzLabelMatch compares the wildcard matcher with a regular expression
// in which * is [^.]* (it never crosses a dot). Pattern labels hold no dot
// (compileTargetPattern splits at dots).
func FuzzLabelMatch(f *testing.F) {
	for _, s := range [][2]string{{"kafka-*", "kafka-1"}, {"*", ""}, {"*-kafka-*", "eu-kafka-7"}, {"a*b*c", "aXbYc"}, {"**", "x"}, {"k*", "k.evil"}} {
		f.Add(s[0], s[1])
	}
	f.Fuzz(func(t *testing.T, pattern, s string) {
		if strings.Contains(pattern, ".") {
			t.Skip()
		}
		parts := strings.Split(pattern, "*")
		for i, p := range parts {
			parts[i] = regexp.QuoteMeta(p)
		}
		re, err := regexp.Compile(`^(?s:` + strings.Join(parts, `[^.]*`) + `)$`)
		if err != nil {
			t.Skip() // patterns that are not valid UTF-8
		}
		if got, want := labelMatch(pattern, s), re.MatchString(s); got != want {
			t.Fatalf("labelMatch(%q, %q) = %v, want %v", pattern, s, got, want)
		}
	})
}

// FuzzParseTarget: any bootstrap server either is refused as malformed or
// is a host:port that the same string, as a pattern, allows; and a name
// pattern's * never lets a target with more labels through.
func FuzzParseTarget(f *testing.F) {
	for _, s := range []string{"kafka-1:9092", "kafka-x:80:9092", ":9092", "[::1]:9092", "10.0.0.1:1", "kafka-1.internal:99999", "a..b:1", "[::ffff:1.2.3.4]:9"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, addr string) {
		tg, err := parseTarget(addr)
		if err != nil {
			return
		}
		p, err := compileTargetPattern(addr)
		if err != nil {
			t.Fatalf("target %q parses but is not a valid pattern: %v", addr, err)
		}
		if !p.match(tg) {
			t.Fatalf("pattern %q does not match itself", addr)
		}
		if tg.labels != nil {
			wild, err := compileTargetPattern("*:*")
			if err != nil {
				t.Fatal(err)
			}
			if wild.match(tg) != (len(tg.labels) == 1) {
				t.Fatalf("*:* matches %q (%d labels) = %v", addr, len(tg.labels), wild.match(tg))
			}
		}
	})
}
