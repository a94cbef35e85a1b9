package profiles

import (
	"slices"
	"strings"

	"github.com/google/pprof/profile"
)

// NormalizeFrameName removes from a frame name the parts a JVM assigns
// anew in every process, so that one function has one name across runs:
// the address of a hidden class or lambda class and the number that
// follows it.
//
//	WritePath$$Lambda$7+0x00007fb8c4a1b2c8.495053715.run  →  WritePath$$Lambda$7.run
//	Foo$$Lambda/0x0000000800c4b000.apply                  →  Foo$$Lambda.apply
//	LambdaForm$MH/0x0000000800c4c000.invoke               →  LambdaForm$MH.invoke
//
// What is removed: "+0x" and its hex digits right after "$$Lambda" or
// "$$Lambda$N" (HotSpot's lambda classes as JFR names them), "/0x" and its
// hex digits right after a name character (hidden classes), and in both
// cases a ".digits" part that directly follows the address. The lambda's
// own number ("$7") stays: distinct lambdas of one class differ only in it.
// A name that is only an address ("0x4a1b2c", BuildTree's name for a frame
// without a function) is never rewritten, nor is an address that does not
// end the name's word (followed by a letter, digit or '_'). The function is
// idempotent.
func NormalizeFrameName(name string) string {
	if !strings.Contains(name, "0x") || strings.HasPrefix(name, "0x") {
		return name
	}
	var b strings.Builder
	i := 0
	for i < len(name) {
		c := name[i]
		if (c == '+' || c == '/') && strings.HasPrefix(name[i+1:], "0x") {
			end := hexEnd(name, i+3)
			if end > i+3 && (end == len(name) || !isNameByte(name[end])) && addressOwner(b.String(), c) {
				i = end
				// The ".495053715" JFR writes after a lambda class's address.
				if i < len(name) && name[i] == '.' {
					if d := digitEnd(name, i+1); d > i+1 && (d == len(name) || !isNameByte(name[d])) {
						i = d
					}
				}
				continue
			}
		}
		b.WriteByte(c)
		i++
	}
	return b.String()
}

// addressOwner reports whether an address introduced by sep ('+' or '/')
// right after prefix belongs to a class the JVM names per process.
func addressOwner(prefix string, sep byte) bool {
	if prefix == "" || !isNameByte(prefix[len(prefix)-1]) && prefix[len(prefix)-1] != '$' {
		return false
	}
	if sep == '/' {
		return true
	}
	// "+0x…" only after $$Lambda or $$Lambda$N.
	p := strings.TrimRight(prefix, "0123456789")
	if len(p) < len(prefix) {
		p, ok := strings.CutSuffix(p, "$")
		if !ok {
			return false
		}
		return strings.HasSuffix(p, "$$Lambda")
	}
	return strings.HasSuffix(prefix, "$$Lambda")
}

func hexEnd(s string, i int) int {
	for i < len(s) && (s[i] >= '0' && s[i] <= '9' || s[i] >= 'a' && s[i] <= 'f' || s[i] >= 'A' && s[i] <= 'F') {
		i++
	}
	return i
}

func digitEnd(s string, i int) int {
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return i
}

func isNameByte(c byte) bool {
	return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' || c == '_'
}

// NameVariants lists, for every normalised frame name of the profiles
// that NormalizeFrameName changed, the names it was made from, sorted:
// what a tooltip shows for a frame that merges several JVM names. Names
// that normalisation leaves alone are not listed. The result is nil when
// nothing was rewritten.
func NameVariants(ps ...*profile.Profile) map[string][]string {
	var out map[string][]string
	add := func(raw string) {
		norm := NormalizeFrameName(raw)
		if norm == raw {
			return
		}
		if out == nil {
			out = make(map[string][]string)
		}
		if !slices.Contains(out[norm], raw) {
			out[norm] = append(out[norm], raw)
		}
	}
	for _, p := range ps {
		if p == nil {
			continue
		}
		for _, f := range p.Function {
			if f == nil {
				continue
			}
			name := f.Name
			if name == "" {
				name = f.SystemName
			}
			add(name)
		}
	}
	for _, v := range out {
		slices.Sort(v)
	}
	return out
}
