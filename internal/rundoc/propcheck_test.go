package rundoc

import (
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

func TestCheckTopic(t *testing.T) {
	good := []string{"t", "kbench-producer", "a.b_c-D9", strings.Repeat("x", 249), "...", ".x"}
	bad := []string{"", ".", "..", strings.Repeat("x", 250), "-x", "--producer.config", "a b", "a\tb", "a\nb", "<b>t</b>",
		"a/b", "a,b", "ü", "a\x00"}
	for _, n := range good {
		if err := CheckTopic(n); err != nil {
			t.Errorf("CheckTopic(%q): %v", n, err)
		}
	}
	for _, n := range bad {
		err := CheckTopic(n)
		if err == nil {
			t.Errorf("CheckTopic(%q) accepted it", n)
			continue
		}
		if len(n) > 2 && strings.Contains(err.Error(), n) {
			t.Errorf("CheckTopic(%q) = %q: the message repeats the name", n, err)
		}
	}
}

func TestCheckPropKey(t *testing.T) {
	good := []string{"acks", "linger.ms", "ssl.truststore.location", "sasl.jaas.config", "client.rack", "x_y-z.1"}
	bad := []string{"", "-x", "--producer-props", "--producer.config", "a=b", "bootstrap.servers=evil:9092", "a:b", "a b", "a\tb",
		"a\nb", "a\x00b", "\xff", strings.Repeat("k", MaxPropKeyLen+1), "a\u2028b"}
	for _, k := range good {
		if err := CheckPropKey(k); err != nil {
			t.Errorf("CheckPropKey(%q): %v", k, err)
		}
	}
	for _, k := range bad {
		if err := CheckPropKey(k); err == nil {
			t.Errorf("CheckPropKey(%q) accepted it", k)
		} else if strings.ContainsAny(err.Error(), "\n\t\x00") {
			t.Errorf("CheckPropKey(%q) = %q: a control character in the message", k, err)
		}
	}
}

func TestCheckPropValue(t *testing.T) {
	const pem = "-----BEGIN CERTIFICATE-----\nAAAA\r\n-----END CERTIFICATE-----"
	tests := []struct {
		key, value string
		ok         bool
	}{
		{"acks", "all", true},
		{"client.id", "a b=c:d --x", true}, // one argument key=value, whatever it holds
		{"sasl.jaas.config", `m required password="p";`, true},
		{"client.id", "a\nbootstrap.servers=evil:9092", false},
		{"client.id", "a\rb", false},
		{"client.id", "a\tb", false},
		{"client.id", "a\x00b", false},
		{"client.id", "a\u2028b", false},
		{"client.id", "\xff", false},
		{"ssl.truststore.certificates", pem, true},
		{"ssl.keystore.key", pem, true},
		{"ssl.truststore.certificates", pem + "\x00", false},
		{"client.id", pem, false},
	}
	for _, tt := range tests {
		err := CheckPropValue(tt.key, tt.value)
		if (err == nil) != tt.ok {
			t.Errorf("CheckPropValue(%q, %q) = %v, want ok %v", tt.key, tt.value, err, tt.ok)
		}
		if err != nil && strings.Contains(err.Error(), tt.value) {
			t.Errorf("the message %q repeats the value, which may be a secret", err)
		}
	}
}

func TestPropKinds(t *testing.T) {
	for k, want := range map[string][3]bool{ // file, config file, class
		"ssl.truststore.location":           {true, false, false},
		"SSL.KEY.LOCATION":                  {true, false, false},
		"producer.config":                   {false, true, false},
		"consumer.config":                   {false, true, false},
		"command.config":                    {false, true, false},
		"sasl.jaas.config":                  {false, false, false},
		"partitioner.class":                 {false, false, true},
		"interceptor.classes":               {false, false, true},
		"sasl.login.callback.handler.class": {false, false, true},
		"config.providers":                  {false, false, true},
		"config.providers.file.class":       {false, false, true},
		"metric.reporters":                  {false, false, true},
		"value.serializer":                  {false, false, true},
		"linger.ms":                         {false, false, false},
		"acks":                              {false, false, false},
	} {
		if got := [3]bool{FileProp(k), ConfigFileProp(k), ClassProp(k)}; got != want {
			t.Errorf("%s: file, config file, class = %v, want %v", k, got, want)
		}
	}
	if k := FirstClassProp(map[string]string{"acks": "1", "value.serializer": "x", "partitioner.class": "y"}); k != "partitioner.class" {
		t.Errorf("FirstClassProp = %q", k)
	}
}

// TestValidateChecksTopicAndProps: every spec, whatever gives it, is
// refused a topic or a property a tool's command line could misread,
// naming the field.
func TestValidateChecksTopicAndProps(t *testing.T) {
	tests := []struct {
		args  []string
		field string
	}{
		{[]string{"--topic", "-x"}, "topic"},
		{[]string{"--topic", "t\n1"}, "topic"},
		{[]string{"--topic", "<script>"}, "topic"},
		{[]string{"--producer-props", "--producer.config=/etc/kbench/prod.properties"}, "producer-props"},
		{[]string{"--producer-props", "client id=x"}, "producer-props"},
	}
	for _, g := range []string{"--consumer.config=/etc/kbench/prod.properties", "g\n1"} {
		_, err := SpecFromParams(Consumer, map[string]json.RawMessage{"group": json.RawMessage(strconv.Quote(g))})
		if err == nil || !strings.Contains(err.Error(), "--group: must be one line") {
			t.Errorf("group %q: %v", g, err)
		}
	}
	for _, tt := range tests {
		_, err := ParseArgs(Producer, tt.args)
		if err == nil || !strings.Contains(err.Error(), "--"+tt.field+":") {
			t.Errorf("ParseArgs(%q) = %v, want an error for %s", tt.args, err, tt.field)
		}
	}
	_, err := SpecFromParams(Producer, map[string]json.RawMessage{"producer-props": json.RawMessage(`{"client.id":"a\nb"}`)})
	if err == nil || !strings.Contains(err.Error(), "producer-props") {
		t.Errorf("a value with a line break: %v", err)
	}
}

var topicRE = regexp.MustCompile(`^[a-zA-Z0-9._][a-zA-Z0-9._-]{0,248}$`)

// FuzzCheckTopic: a name CheckTopic accepts is one Kafka accepts and no
// tool reads as an option.
func FuzzCheckTopic(f *testing.F) {
	for _, s := range []string{"t", "-x", ".", "..", "a\nb", "<b>", strings.Repeat("x", 250)} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, name string) {
		err := CheckTopic(name)
		if ok := topicRE.MatchString(name) && name != "." && name != ".."; ok != (err == nil) {
			t.Fatalf("CheckTopic(%q) = %v, Kafka's rule says ok=%v", name, err, ok)
		}
	})
}

// FuzzCheckPropKey: a key CheckPropKey accepts stays one key in
// key=value and in a properties file line, and is no option.
func FuzzCheckPropKey(f *testing.F) {
	for _, s := range []string{"acks", "--producer-props", "a=b", "a b", "a\nb", "ü.x", "a:b"} {
		f.Add(s, "v")
	}
	f.Fuzz(func(t *testing.T, key, value string) {
		if CheckPropKey(key) != nil {
			return
		}
		if strings.HasPrefix(key, "-") || strings.ContainsAny(key, "=:") || strings.ContainsFunc(key, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }) {
			t.Fatalf("CheckPropKey accepted %q", key)
		}
		if k, _, _ := strings.Cut(key+"="+value, "="); k != key {
			t.Fatalf("%q=%q reads back with key %q", key, value, k)
		}
		if CheckPropValue(key, value) == nil && strings.ContainsFunc(value, unicode.IsControl) && !inlinePEMProps[key] {
			t.Fatalf("CheckPropValue(%q) accepted a control character", value)
		}
	})
}

// TestContractTouchesNoPath: validating a spec without the runner's
// check (as a server importing a result does) looks at no path it
// names, so its answer is the same for a file that exists and one that
// does not; the runner's check (runner.Validate) looks for the payload
// file of a run it will make.
func TestContractTouchesNoPath(t *testing.T) {
	var answers []string
	for _, p := range []string{"/", "/does/not/exist"} {
		_, err := SpecFromParams(Producer, map[string]json.RawMessage{"payload-file": json.RawMessage(`"` + p + `"`)})
		answers = append(answers, fmt.Sprint(err))
	}
	if answers[0] != answers[1] || answers[0] != "<nil>" {
		t.Errorf("answers by path: %q", answers)
	}
}
