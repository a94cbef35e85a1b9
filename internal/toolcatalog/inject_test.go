package toolcatalog

import (
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/kbench/kbench/internal/rundoc"
)

// options are the elements of argv a parser reads as options (a
// negative number, such as --throughput's -1, is a value).
func options(args []string) []string {
	var out []string
	for _, a := range args {
		if _, err := strconv.ParseFloat(a, 64); err == nil {
			continue
		}
		if strings.HasPrefix(a, "-") {
			out = append(out, a)
		}
	}
	slices.Sort(out)
	return out
}

// TestArgsRefuseInjectedOptions: a spec whose properties or topic would
// reach the tool as an option (the attack of a request giving
// "--producer-props" or "--producer.config" as property names) is
// refused by Args, whatever validated it before; no argv it builds has
// an option its template does not put there.
func TestArgsRefuseInjectedOptions(t *testing.T) {
	base := rundoc.DefaultSpec(rundoc.Producer)
	base.Tool, base.Topic, base.NumRecords, base.BootstrapServer = "p", "t1", 100, "k1:9092"
	tests := []struct {
		name  string
		topic string
		props map[string]string
	}{
		{"option as a key", "t1", map[string]string{"--producer-props": "bootstrap.servers=attacker.example:9092"}},
		{"config file option", "t1", map[string]string{"--producer.config": "/etc/kbench/prod.properties"}},
		{"short option", "t1", map[string]string{"-x": "1"}},
		{"= in a key", "t1", map[string]string{"bootstrap.servers=attacker.example:9092 acks": "1"}},
		{"space in a key", "t1", map[string]string{"acks --print-metrics": "1"}},
		{"line break in a value", "t1", map[string]string{"client.id": "a\nbootstrap.servers=attacker.example:9092"}},
		{"config file as a property", "t1", map[string]string{"producer.config": "/etc/kbench/prod.properties"}},
		{"topic as an option", "--producer.config", nil},
		{"topic with a line break", "t\n1", nil},
		{"topic with markup", "<b>t</b>", nil},
	}
	group := base
	group.Workload, group.Group = rundoc.Consumer, "--consumer.config=/etc/kbench/prod.properties"
	if args, err := Args(ConsumerPerfTest, "", group, ""); err == nil {
		t.Errorf("a group that reads as an option: Args took it: %q", args)
	}
	// The rule the spec's validation applies, exactly: a C1 control
	// character (U+0085, a line break to some readers) is no group name.
	group.Group = "g\u0085x"
	if args, err := Args(ConsumerPerfTest, "", group, ""); err == nil {
		t.Errorf("a group holding U+0085: Args took it: %q", args)
	}
	if err := rundoc.CheckGroup(group.Group); err == nil {
		t.Error("CheckGroup took a group holding U+0085")
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			spec := base
			spec.Topic, spec.Props = tt.topic, tt.props
			for _, k := range Kinds() {
				for _, v := range []Version{"", "4.2"} {
					spec.Workload = k.Workload()
					args, err := Args(k, v, spec, "")
					if err == nil {
						t.Errorf("%s@%s: Args took it: %q", k, v, args)
					}
				}
			}
		})
	}
	// A valid spec: the options are the template's, whatever the
	// properties (those of the producer's --producer-props are key=value).
	spec := base
	spec.Props = map[string]string{"acks": "all", "client.id": "c-1", "ssl.truststore.certificates": "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----"}
	args, err := Args(ProducerPerfTest, "", spec, "conf")
	if err != nil {
		t.Fatal(err)
	}
	want := []string{"--num-records", "--producer-props", "--producer.config", "--record-size", "--throughput", "--topic"}
	if got := options(args); !slices.Equal(got, want) {
		t.Errorf("options %q, want %q (argv %q)", got, want, args)
	}
	for _, a := range args {
		if strings.ContainsAny(a, "\r\n") {
			t.Errorf("an argument spans lines: %q (inline PEM belongs in the properties file)", a)
		}
	}
	if conf := ConfigProps(ProducerPerfTest, spec.Props); conf["ssl.truststore.certificates"] == "" {
		t.Errorf("the multi-line certificate is in neither the command line nor the file: %q", conf)
	}
}

// FuzzArgs: whatever a spec's topic and one property hold, Args either
// refuses it or builds an argv whose options are exactly the
// template's (those of the same spec without the property).
func FuzzArgs(f *testing.F) {
	f.Add("t1", "acks", "all")
	f.Add("t1", "--producer-props", "bootstrap.servers=attacker.example:9092")
	f.Add("-t", "linger.ms", "5")
	f.Add("t1", "client.id", "a b\tc")
	f.Add("..", "a=b", "c")
	f.Fuzz(func(t *testing.T, topic, key, value string) {
		for i, k := range Kinds() {
			v := Version([]string{"", "4.2"}[i%2]) // old and new flag names
			spec := rundoc.DefaultSpec(k.Workload())
			spec.Tool, spec.Topic, spec.NumRecords, spec.BootstrapServer = "p", topic, 100, "k1:9092"
			plain, perr := Args(k, v, spec, "conf")
			spec.Props = map[string]string{key: value}
			args, err := Args(k, v, spec, "conf")
			if err != nil {
				continue
			}
			if perr != nil {
				t.Fatalf("%s: refused without the property (%v), taken with it: %q", k, perr, args)
			}
			if got, want := options(args), options(plain); !slices.Equal(got, want) {
				t.Fatalf("%s: topic %q, %q=%q: options %q, want the template's %q", k, topic, key, value, got, want)
			}
			for _, a := range args {
				if strings.ContainsAny(a, "\r\n") {
					t.Fatalf("%s: an argument spans lines: %q", k, a)
				}
			}
		}
	})
}
