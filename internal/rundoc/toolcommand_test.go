package rundoc

import (
	"strings"
	"testing"
)

// TestToolCommandSettings: what each tool's command line says, under
// kbench's setting names; connection and secret properties and unknown
// tools give nothing.
func TestToolCommandSettings(t *testing.T) {
	tests := []struct {
		name, command, want string
	}{
		{"producer", "bin/kafka-producer-perf-test.sh --topic t --num-records 500000 --record-size 512 --throughput=-1 " +
			"--producer-props bootstrap.servers=b:9092 acks=-1 linger.ms=5 sasl.jaas.config=x --print-metrics --warmup-records 1000",
			"num-records=500000 record-size=512 throughput=-1 acks=all linger.ms=5 warmup-records=1000"},
		{"producer 4.1 names", "kafka-producer-perf-test.sh --bootstrap-server b:9092 --topic t --num-records 10 --payload-file p.txt --throughput 100 --command-property compression.type=zstd --command-config c.properties",
			"num-records=10 payload=file p.txt throughput=100 compression.type=zstd"},
		{"class name", "bin/kafka-run-class.sh org.apache.kafka.tools.ProducerPerformance --record-size 100", "record-size=100"},
		{"consumer", "kafka-consumer-perf-test.sh --bootstrap-server b:9092 --topic t --messages 1000000 --fetch-size 1048576 --from-latest",
			"num-records=1000000 max.partition.fetch.bytes=1048576 auto.offset.reset=latest"},
		{"consumer defaults", "kafka-consumer-perf-test --messages 5", "num-records=5 auto.offset.reset=earliest"},
		{"share consumer", "bin/kafka-share-consumer-perf-test.sh --bootstrap-server b:9092 --topic t --num-records 100000 --fetch-size 524288 --command-property max.poll.records=500",
			"num-records=100000 fetch.max.bytes=524288 max.poll.records=500"},
		{"share consumer class", "kafka-run-class.sh org.apache.kafka.tools.ShareConsumerPerformance --messages 7", "num-records=7"},
		{"e2e positional", "bin/kafka-e2e-latency.sh b:9092 lat 10000 -1 512", "num-records=10000 acks=all record-size=512"},
		{"e2e named", "bin/kafka-e2e-latency.sh --bootstrap-server b:9092 --topic lat --num-records 100 --producer-acks 1 --record-size 64",
			"num-records=100 acks=1 record-size=64"},
		{"not a tool", "kbench run producer --record-size 512", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			argv, err := SplitCommandLine(tt.command)
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, s := range ToolCommandSettings(argv) {
				got = append(got, s.Name+"="+s.Value)
			}
			if strings.Join(got, " ") != tt.want {
				t.Errorf("got  %q\nwant %q", strings.Join(got, " "), tt.want)
			}
		})
	}
}

// TestSplitCommandLine: words as a shell splits a plain command.
func TestSplitCommandLine(t *testing.T) {
	tests := []struct{ in, want, err string }{
		{"a  b\tc", "a|b|c", ""},
		{`a 'b c' "d \"e\" $f" g\ h`, `a|b c|d "e" $f|g h`, ""},
		{"a \\\n  b", "a|b", ""},
		{`a ''`, "a|", ""},
		{`a 'b`, "", "single quote is not closed"},
		{`a "b`, "", "double quote is not closed"},
	}
	for _, tt := range tests {
		got, err := SplitCommandLine(tt.in)
		switch {
		case tt.err != "" && (err == nil || !strings.Contains(err.Error(), tt.err)):
			t.Errorf("%q: error %v, want %q", tt.in, err, tt.err)
		case tt.err == "" && (err != nil || strings.Join(got, "|") != tt.want):
			t.Errorf("%q: %q %v, want %q", tt.in, got, err, tt.want)
		}
	}
}

// FuzzToolCommand: any command line splits or is refused, and reading
// its settings never fails.
func FuzzToolCommand(f *testing.F) {
	f.Add("bin/kafka-producer-perf-test.sh --topic t --num-records 5 --producer-props acks=all 'x=y z'")
	f.Add(`kafka-e2e-latency.sh b t 1 all 2 "p"`)
	f.Add("kafka-consumer-perf-test --messages=3 --from-latest \\\n --fetch-size")
	f.Fuzz(func(t *testing.T, s string) {
		argv, err := SplitCommandLine(s)
		if err != nil {
			return
		}
		for _, w := range argv {
			if len(w) > len(s) {
				t.Fatalf("word %q longer than the input", w)
			}
		}
		for _, st := range ToolCommandSettings(argv) {
			if st.Name == "" || st.Name == "bootstrap.servers" || strings.HasPrefix(st.Name, "sasl.") {
				t.Fatalf("setting %+v", st)
			}
		}
	})
}
