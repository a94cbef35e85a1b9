package rundoc

import (
	"errors"
	"strings"
	"testing"
)

// TestValidateMeta: every entry point's metadata is checked here; a bad
// tag is a field error on "meta" naming its key.
func TestValidateMeta(t *testing.T) {
	many := map[string]string{}
	for i := 0; i <= MaxMetaTags; i++ {
		many["k"+strings.Repeat("x", i)] = "v"
	}
	cases := []struct {
		name string
		meta map[string]string
		want string // "" for valid; else a part of the message
	}{
		{"none", nil, ""},
		{"well-known keys", map[string]string{"commit": "abc123", "branch": "feature/x@y", "version": "v0.4.49"}, ""},
		{"free tags", map[string]string{"build.id": "42", "ci_runner": "gh-7", "0day": "ünïcode ok"}, ""},
		{"longest key and value", map[string]string{strings.Repeat("k", 64): strings.Repeat("v", MaxMetaValue)}, ""},
		{"upper case key", map[string]string{"Commit": "x"}, `key "Commit"`},
		{"key with a space", map[string]string{"my key": "x"}, `key "my key"`},
		{"key starting with a dot", map[string]string{".x": "x"}, `key ".x"`},
		{"key too long", map[string]string{strings.Repeat("k", 65): "x"}, "at most 64 bytes"},
		{"empty key", map[string]string{"": "x"}, `key ""`},
		{"empty value", map[string]string{"commit": ""}, `key "commit": empty value`},
		{"value too long", map[string]string{"commit": strings.Repeat("v", MaxMetaValue+1)}, "257 bytes, at most 256"},
		{"newline in value", map[string]string{"commit": "a\nb"}, "control character"},
		{"invalid UTF-8", map[string]string{"commit": "a\xffb"}, "not valid UTF-8"},
		{"too many tags", many, "at most 32 tags"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := ValidateMeta(c.meta)
			if c.want == "" {
				if err != nil {
					t.Fatalf("refused: %v", err)
				}
				return
			}
			var fe *FieldError
			if !errors.As(err, &fe) || fe.Field != "meta" {
				t.Fatalf("error %v: want a field error on meta", err)
			}
			if !strings.Contains(fe.Msg, c.want) {
				t.Errorf("message %q does not say %q", fe.Msg, c.want)
			}
		})
	}
}

func TestParseMeta(t *testing.T) {
	m, err := ParseMeta([]string{"commit=abc123", "branch=trunk", "note=a=b"})
	if err != nil {
		t.Fatal(err)
	}
	if m["commit"] != "abc123" || m["branch"] != "trunk" || m["note"] != "a=b" || len(m) != 3 {
		t.Errorf("got %v", m)
	}
	if m, err := ParseMeta(nil); err != nil || m != nil {
		t.Errorf("no pairs: %v, %v; want nil, nil", m, err)
	}
	for _, bad := range [][]string{{"commit"}, {"commit=a", "commit=b"}, {"Bad=x"}, {"commit="}} {
		var fe *FieldError
		if _, err := ParseMeta(bad); !errors.As(err, &fe) || fe.Field != "meta" {
			t.Errorf("%q: %v, want a field error on meta", bad, err)
		}
	}
	m, err = ParseMetaText("  commit=abc \r\n\n branch=trunk\n")
	if err != nil || m["commit"] != "abc" || m["branch"] != "trunk" {
		t.Errorf("text: %v, %v", m, err)
	}
	if got := MetaLines(m); got != "branch=trunk\ncommit=abc\n" {
		t.Errorf("lines: %q", got)
	}
	if got := WithDefaultMeta(map[string]string{"version": "mine"}, map[string]string{"version": "v1", "x": "y"}); got["version"] != "mine" || got["x"] != "y" {
		t.Errorf("defaults: %v", got)
	}
}

// TestSeriesKey: a series is one workload (fingerprint: workload fields
// and target) on one branch. The label and secrets take no part; the
// branch, the target and the workload's fields do; bootstrap servers are
// a set.
func TestSeriesKey(t *testing.T) {
	base := func() Spec {
		s := DefaultSpec(Producer)
		s.BootstrapServer = "b:9092,a:9092"
		s.Props = map[string]string{"security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "PLAIN",
			"sasl.username": "u", "sasl.password": "hunter2"}
		return s
	}
	key := func(s Spec, branch string) string {
		t.Helper()
		fp, err := s.Fingerprint()
		if err != nil {
			t.Fatal(err)
		}
		return SeriesKey(fp, branch)
	}
	ref := key(base(), "trunk")
	if strings.Contains(ref, "hunter2") {
		t.Fatalf("the key %q holds the password", ref)
	}
	same := map[string]func(*Spec){
		"another password":            func(s *Spec) { s.Props["sasl.password"] = "correct horse" },
		"servers in another order":    func(s *Spec) { s.BootstrapServer = "a:9092, b:9092" },
		"servers repeated":            func(s *Spec) { s.BootstrapServer = "a:9092,b:9092,a:9092" },
		"reporting interval":          func(s *Spec) { s.ReportingInterval = 1000 },
		"profiles":                    func(s *Spec) { s.Profiles = []string{"cpu"} },
		"a JAAS line with a password": func(s *Spec) {},
	}
	for name, change := range same {
		s := base()
		change(&s)
		if got := key(s, "trunk"); got != ref {
			t.Errorf("%s changed the series: %q, want %q", name, got, ref)
		}
	}
	jaas := func(pw string) Spec {
		s := base()
		s.Props["sasl.jaas.config"] = `org.apache.kafka.common.security.plain.PlainLoginModule required username="u" password="` + pw + `";`
		return s
	}
	if key(jaas("one"), "") != key(jaas("two"), "") {
		t.Error("the password in sasl.jaas.config changed the series")
	}
	differ := map[string]func(*Spec){
		"another target":      func(s *Spec) { s.BootstrapServer = "c:9092" },
		"the embedded broker": func(s *Spec) { s.BootstrapServer = "" },
		"another record size": func(s *Spec) { s.RecordSize = 1000 },
		"another acks":        func(s *Spec) { s.Props["acks"] = "1" },
		"another topic":       func(s *Spec) { s.Topic = "other" },
	}
	for name, change := range differ {
		s := base()
		change(&s)
		if got := key(s, "trunk"); got == ref {
			t.Errorf("%s kept the series %q", name, got)
		}
	}
	if key(base(), "main") == ref || key(base(), "") == ref {
		t.Error("another branch, or none, kept the series")
	}
	c := DefaultSpec(Consumer)
	c.BootstrapServer = "b:9092,a:9092"
	if key(c, "trunk") == ref {
		t.Error("another workload kept the series")
	}

	fp := "3f2a9c0d21b7e4a5"
	for _, tc := range []struct{ got, want string }{
		{SeriesKey(fp, ""), fp},
		{SeriesKey(fp, "trunk"), fp + "@trunk"},
		{SeriesKey(fp, "a@b%c"), fp + "@a%40b%25c"},
		{ImportSeriesKey(Producer, "java producer", ""), "imported:producer:java producer"},
		{ImportSeriesKey(Producer, "java producer", "trunk"), "imported:producer:java producer@trunk"},
		{ImportSeriesKey(Producer, "a@b", ""), "imported:producer:a%40b"},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
	// A label with '@' never meets a label and a branch.
	if ImportSeriesKey(Producer, "a@b", "") == ImportSeriesKey(Producer, "a", "b") {
		t.Error("label a@b and label a on branch b share a series")
	}
	if ImportSeriesKey(Producer, "l", "") == ImportSeriesKey(Consumer, "l", "") {
		t.Error("two tools share a series")
	}
	for _, bad := range []string{"", strings.Repeat("s", MaxSeriesName+1), "a\tb"} {
		var fe *FieldError
		if err := ValidateSeriesName(bad); !errors.As(err, &fe) || fe.Field != "series" {
			t.Errorf("series %q: %v, want a field error on series", bad, err)
		}
	}
	if err := ValidateSeriesName("java-producer@trunk"); err != nil {
		t.Error(err)
	}
}
