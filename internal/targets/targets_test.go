package targets

import (
	"errors"
	"strings"
	"testing"

	"github.com/kbench/kbench/internal/rundoc"
)

func TestAllowTargetMatching(t *testing.T) {
	tests := []struct {
		pattern, target string
		want            bool
	}{
		{"kafka-*:9092", "kafka-1:9092", true},
		{"kafka-*:9092", "KAFKA-1:9092", true},
		{"kafka-*:9092", "kafka-evil.attacker.example:9092", false},
		{"kafka-*:9092", "kafka-169.254.169.254.nip.io:9092", false},
		{"kafka-*:9092", "kafka-1:9093", false},
		{"kafka-*:9092", "zookeeper:9092", false},
		{"kafka-*.internal:9093", "kafka-3.internal:9093", true},
		{"kafka-*.internal:9093", "kafka-3.evil.internal:9093", false},
		{"kafka-*.internal:9093", "kafka-3.internal.evil.example:9093", false},
		{"*.internal:9093", "b1.internal:9093", true},
		{"*.internal:9093", "a.b1.internal:9093", false},
		{"*-kafka-*.prod.example:9092", "eu-kafka-7.prod.example:9092", true},
		{"*-kafka-*.prod.example:9092", "eu-kafka.prod.example:9092", false},
		{"broker.example:*", "broker.example:1", true},
		{"broker.example:*", "broker.example.evil:1", false},
		{"127.0.0.1:*", "127.0.0.1:9092", true},
		{"127.0.0.1:*", "127.0.0.10:9092", false},
		{"10.0.0.*:9092", "10.0.0.7:9092", true},
		{"10.0.0.*:9092", "10.0.0.7.nip.io:9092", false},
		{"[::1]:9092", "[::1]:9092", true},
		{"[::1]:9092", "[0:0::1]:9092", true},
		{"[::1]:9092", "[::2]:9092", false},
		{"*:9092", "[::1]:9092", false}, // wildcards match names and IPv4, never IPv6 addresses
		{"*:9092", "kafka:9092", true},
		{"*:9092", "kafka.example:9092", false},
		{"kafka:9092", "kafka:09092", true},
	}
	for _, tt := range tests {
		p, err := compileTargetPattern(tt.pattern)
		if err != nil {
			t.Errorf("compile %q: %v", tt.pattern, err)
			continue
		}
		tg, err := parseTarget(tt.target)
		if err != nil {
			t.Errorf("parseTarget(%q): %v", tt.target, err)
			continue
		}
		if got := p.match(tg); got != tt.want {
			t.Errorf("%q matches %q = %v, want %v", tt.pattern, tt.target, got, tt.want)
		}
	}
}

func TestAllowTargetPatternsValidated(t *testing.T) {
	for _, p := range []string{"kafka-?:9092", "kafka-[12]:9092", "kafka", "kafka:", ":9092", "kafka:port", "kafka:0", "kafka:65536",
		"kafka:90*", "kafka..internal:9092", "kafka:80:9092", "[::1*]:9092", "kafka/1:9092", "", "kafka 1:9092"} {
		_, err := Parse([]string{p})
		if err == nil || !strings.Contains(err.Error(), "--allow-target") {
			t.Errorf("--allow-target %q: error %v, want one naming --allow-target", p, err)
		}
	}
	for _, p := range []string{"kafka-*:9092", "127.0.0.1:*", "[::1]:9092", " kafka-1.internal:9093 ", "kafka_1:9092"} {
		if _, err := Parse([]string{p}); err != nil {
			t.Errorf("--allow-target %q: %v", p, err)
		}
	}
}

// TestAllowsWording: a refusal says what is wrong with which address and
// names no command (the caller says which command's flag would allow
// it); NotAllowed tells the two refusals apart; no patterns allow
// nothing.
func TestAllowsWording(t *testing.T) {
	p, err := Parse([]string{"kafka-*:9092"})
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		policy     *Policy
		addrs      []string
		want       string // "" for allowed
		notAllowed string // NotAllowed's address, "" for none
	}{
		{p, []string{"kafka-1:9092", "KAFKA-2:9092"}, "", ""},
		{p, nil, "", ""},
		{p, []string{"kafka-1:9092", "kafka-x.evil:9092"}, "kafka-x.evil:9092 is not an allowed target", "kafka-x.evil:9092"},
		{p, []string{"kafka-x:80:9092"}, `"kafka-x:80:9092" is not a valid host:port address: too many colons in address`, ""},
		{p, []string{"kafka-x:99999"}, `"kafka-x:99999" is not a valid host:port address: port "99999" must be a number from 1 to 65535`, ""},
		{nil, []string{"kafka-1:9092"}, "kafka-1:9092 is not an allowed target", "kafka-1:9092"},
		{nil, nil, "", ""},
	}
	for _, tt := range tests {
		err := tt.policy.Allows(tt.addrs)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != tt.want {
			t.Errorf("Allows(%q) = %q, want %q", tt.addrs, got, tt.want)
		}
		if strings.Contains(got, "kbench") || strings.Contains(got, "--allow-target") {
			t.Errorf("Allows(%q) = %q names a command or its flag", tt.addrs, got)
		}
		explained := Explain(err, "kbench worker")
		switch {
		case tt.notAllowed != "":
			want := tt.want + "; start kbench worker with --allow-target '" + tt.notAllowed + "' to allow it"
			if explained == nil || explained.Error() != want || !errors.Is(explained, err) {
				t.Errorf("Explain(Allows(%q)) = %v, want %q wrapping the refusal", tt.addrs, explained, want)
			}
		case explained != err:
			t.Errorf("Explain(Allows(%q)) = %v, want the refusal as it is (%v)", tt.addrs, explained, err)
		}
		addr, ok := NotAllowed(err)
		if addr != tt.notAllowed || ok != (tt.notAllowed != "") {
			t.Errorf("NotAllowed(Allows(%q)) = %q, %v, want %q", tt.addrs, addr, ok, tt.notAllowed)
		}
	}
	if got, err := Parse(nil); got != nil || err != nil {
		t.Errorf("Parse(nil) = %v, %v; want nil, nil", got, err)
	}
}

// TestAllowsStored: a stored spec's bootstrap servers, given as the
// bootstrap-server param or the bootstrap.servers property, are checked;
// a spec that does not parse, or that the checks refuse, is left to the
// run's execution.
func TestAllowsStored(t *testing.T) {
	p, err := Parse([]string{"kafka-*:9092"})
	if err != nil {
		t.Fatal(err)
	}
	refuseAll := func(s *rundoc.Spec, errs *rundoc.FieldErrors) { errs.Add("num-records", "refused by the check") }
	tests := []struct {
		name, spec string
		checks     []rundoc.Check
		want       string
	}{
		{"allowed", `{"workload":"producer","params":{"bootstrap-server":"kafka-1:9092"}}`, nil, ""},
		{"embedded broker", `{"workload":"producer","params":{"num-records":100}}`, nil, ""},
		{"param", `{"workload":"producer","params":{"bootstrap-server":"kafka-evil.attacker.example:9092"}}`, nil,
			"kafka-evil.attacker.example:9092 is not an allowed target"},
		{"property", `{"workload":"producer","params":{"producer-props":["bootstrap.servers=kafka-1:9092,kafka-a.evil:9092"]}}`, nil,
			"kafka-a.evil:9092 is not an allowed target"},
		{"not JSON", `{"workload":`, nil, ""},
		{"refused by the checks", `{"workload":"producer","params":{"bootstrap-server":"kafka-evil.attacker.example:9092"}}`, []rundoc.Check{refuseAll}, ""},
	}
	for _, tt := range tests {
		err := p.AllowsStored(tt.spec, tt.checks...)
		got := ""
		if err != nil {
			got = err.Error()
		}
		if got != tt.want {
			t.Errorf("%s: AllowsStored = %q, want %q", tt.name, got, tt.want)
		}
	}
}
