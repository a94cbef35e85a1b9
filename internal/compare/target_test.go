package compare

import (
	"strings"
	"testing"

	"github.com/kbench/kbench/internal/rundoc"
)

// TestComparabilityTargetIsWhatItIs: runs on embedded brokers that picked
// different ports, and runs on one cluster whose bootstrap servers were
// listed in another order, talked to the same target: no "target"
// difference. Another cluster is one.
func TestComparabilityTargetIsWhatItIs(t *testing.T) {
	withBroker := func(env, broker, kind string) string {
		env = strings.Replace(env, `"broker":"embedded kfake at 127.0.0.1:30010"`, `"broker":"`+broker+`"`, 1)
		return strings.Replace(env, `"kind":"embedded"`, `"kind":"`+kind+`"`, 1)
	}
	for _, tt := range []struct {
		name           string
		brokers, kinds [4]string
		want           string // the target difference's values, "" for none
	}{
		{"embedded brokers on four ports",
			[4]string{"embedded kfake (own process, log.segment.bytes=1048576) at 127.0.0.1:46855", "embedded kfake (own process, log.segment.bytes=1048576) at 127.0.0.1:36135",
				"embedded kfake (own process, log.segment.bytes=1048576) at 127.0.0.1:41001", "embedded kfake (own process, log.segment.bytes=1048576) at 127.0.0.1:41002"},
			[4]string{"embedded", "embedded", "embedded", "embedded"}, ""},
		{"one cluster, servers in another order",
			[4]string{"kafka-1:9092,kafka-2:9092", "kafka-2:9092,kafka-1:9092", "kafka-2:9092, kafka-1:9092", "kafka-1:9092,kafka-2:9092"},
			[4]string{"cluster", "cluster", "cluster", "cluster"}, ""},
		{"another cluster",
			[4]string{"kafka-1:9092,kafka-2:9092", "kafka-2:9092,kafka-1:9092", "kafka-3:9092", "kafka-3:9092"},
			[4]string{"cluster", "cluster", "cluster", "cluster"}, "cluster (kafka-1:9092,kafka-2:9092)|cluster (kafka-3:9092)"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			var rs []rundoc.Run
			for i := range 4 {
				r := run(uint(i+1), []string{"A", "A", "B", "B"}[i], producerMetrics(1, i)...)
				r.SetDocuments(withBroker(envJSON(0.1, "embedded", "acks", "all"), tt.brokers[i], tt.kinds[i]), "")
				rs = append(rs, r)
			}
			tab, err := Build(Columns(rs, ByLabel), Options{})
			if err != nil {
				t.Fatal(err)
			}
			got := differences(exportDoc(t, tab))
			if v := strings.Join(got["target"], "|"); v != tt.want {
				t.Errorf("target difference %q, want %q (all: %v)", v, tt.want, got)
			}
		})
	}
}
