package rundoc

// Moved with the JAAS parser from internal/kafkasec: the fuzz target of
// ParseJAAS and the redaction of JAAS text (RedactProps).

import (
	"strings"
	"testing"
)

// Login module classes of the seeds (Kafka's own).
const (
	plainModule = "org.apache.kafka.common.security.plain.PlainLoginModule"
	scramModule = "org.apache.kafka.common.security.scram.ScramLoginModule"
)

// skeleton replaces the value of every secret option in s with "\x00",
// using the parser's own spans.
func skeleton(s string, entries []JAASEntry) string {
	var sb strings.Builder
	last := 0
	for _, e := range entries {
		for _, o := range e.Options {
			if SecretName(o.Name) {
				sb.WriteString(s[last:o.Start])
				sb.WriteByte(0)
				last = o.End
			}
		}
	}
	sb.WriteString(s[last:])
	return sb.String()
}

// jaasMessages are all the texts ParseJAAS errors may carry.
var jaasMessages = map[string]bool{
	"unterminated /* comment":            true,
	"unterminated quoted value":          true,
	"expected a login module class name": true,
	"expected a control flag (required, requisite, sufficient or optional) after the login module class name": true,
	"expected an option name (or ';' to end the entry)":                                                       true,
	"expected '=' after an option name (values containing spaces, '=' or ';' must be quoted)":                 true,
	"expected an option value after '='":                                                                      true,
	"no login module entry found":                                                                             true,
}

// FuzzParseJAAS checks that parsing never panics, that errors never quote
// the input, and that RedactProps of parseable JAAS text changes exactly the
// secret values (to "[redacted]") so a parsed password cannot survive.
func FuzzParseJAAS(f *testing.F) {
	for _, seed := range []string{
		plainModule + ` required username="alice" password="secret";`,
		scramModule + ` required username='bob' password="p\"a\\ss;w=rd" tokenauth=false;`,
		"x.PlainLoginModule REQUIRED /* c */ password = // c\n 'pw' ; y.Other optional a=b;",
		`m required password=unquoted`,
		`m required password="\101\7\377\u"`,
		`m required password="unterminated`,
		`m required password`,
		`;`,
		``,
		`m required clientSecret="s" token='t' a=b;`,
		`m sufficient password="" username=""`,
	} {
		f.Add(seed)
	}
	f.Fuzz(func(t *testing.T, s string) {
		entries, err := ParseJAAS(s)
		if err != nil {
			if entries != nil {
				t.Fatal("entries returned with an error")
			}
			// Errors are fixed texts plus an offset, never input text.
			se, ok := err.(*JAASSyntaxError)
			if !ok || !jaasMessages[se.Msg] || se.Offset < 0 || se.Offset > len(s) {
				t.Fatalf("unexpected error %#v", err)
			}
			if got := RedactProps(map[string]string{propSASLJAASConfig: s})[propSASLJAASConfig]; s != "" && got != Redacted {
				t.Fatalf("unparseable JAAS not redacted whole: %q", got)
			}
			return
		}
		for _, e := range entries {
			for _, o := range e.Options {
				if o.Start < 0 || o.End > len(s) || o.Start >= o.End {
					t.Fatalf("bad span %d..%d of %d", o.Start, o.End, len(s))
				}
			}
		}
		out := RedactProps(map[string]string{propSASLJAASConfig: s})[propSASLJAASConfig]
		again, err := ParseJAAS(out)
		if err != nil {
			t.Fatalf("redacted text does not parse: %v\nin:  %q\nout: %q", err, s, out)
		}
		if len(again) != len(entries) {
			t.Fatalf("redaction changed the entry count")
		}
		for i := range entries {
			a, b := entries[i], again[i]
			if a.Module != b.Module || a.Flag != b.Flag || len(a.Options) != len(b.Options) {
				t.Fatalf("redaction changed entry %d: %+v -> %+v", i, a, b)
			}
			for j := range a.Options {
				oa, ob := a.Options[j], b.Options[j]
				want := oa.Value
				if SecretName(oa.Name) {
					want = Redacted
				}
				if oa.Name != ob.Name || ob.Value != want {
					t.Fatalf("option %d.%d: %q=%q became %q=%q", i, j, oa.Name, oa.Value, ob.Name, ob.Value)
				}
			}
		}
		// Outside the secret values, not a byte changed.
		if skeleton(s, entries) != skeleton(out, again) {
			t.Fatalf("redaction changed non-secret text:\nin:  %q\nout: %q", s, out)
		}
		// So a password can only "appear" in the output by coincidence:
		// as part of non-secret text, or inside the marker.
		for _, e := range entries {
			for _, pw := range e.Option("password") {
				if pw == "" || strings.Contains(skeleton(s, entries), pw) ||
					strings.Contains(`"`+Redacted+`"`, pw) || strings.Contains(pw, `"`) {
					continue
				}
				if strings.Contains(out, pw) {
					t.Fatalf("password %q survives in %q", pw, out)
				}
			}
		}
	})
}
