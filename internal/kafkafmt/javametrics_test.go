package kafkafmt

import (
	"strings"
	"testing"

	"github.com/kbench/kbench/internal/rundoc"
)

// TestJavaMetricCatalog: the Java clients' metrics people paste from
// JIRA and pull requests have their unit and direction.
func TestJavaMetricCatalog(t *testing.T) {
	tests := []struct {
		name, unit string
		better     rundoc.Better
	}{
		{"io-wait-ratio", "ratio", ""},
		{"io-ratio", "ratio", ""},
		{"io-wait-time-ns-avg", "ns", ""},
		{"select-rate", "/s", ""},
		{"poll-idle-ratio-avg", "ratio", ""},
		{"time-between-poll-avg", "ms", ""},
		{"time-between-poll-max", "ms", ""},
		{"commit-latency-avg", "ms", rundoc.LowerIsBetter},
		{"fetch-latency-avg", "ms", rundoc.LowerIsBetter},
		{"fetch-latency-max", "ms", rundoc.LowerIsBetter},
		{"records-lag-max", "records", rundoc.LowerIsBetter},
		{"bytes-consumed-rate", "bytes/s", rundoc.HigherIsBetter},
		{"records-consumed-rate", "records/s", rundoc.HigherIsBetter},
		{"request-latency-avg", "ms", rundoc.LowerIsBetter},
		{"record-queue-time-avg", "ms", rundoc.LowerIsBetter},
		{"batch-size-avg", "bytes", ""},
		{"compression-rate-avg", "ratio", rundoc.LowerIsBetter},
		{"buffer-available-bytes", "bytes", ""},
		{"record-send-rate", "records/s", rundoc.HigherIsBetter},
		{"outgoing-byte-rate", "bytes/s", ""},
	}
	for _, tt := range tests {
		m, ok := LookupJavaMetric(tt.name)
		if !ok {
			t.Errorf("%s: not in the catalog", tt.name)
			continue
		}
		if m.Unit != tt.unit || m.Better != tt.better || m.Help == "" {
			t.Errorf("%s: unit %q, better %q, help %q; want %q, %q and a help text", tt.name, m.Unit, m.Better, m.Help, tt.unit, tt.better)
		}
	}
	if _, ok := LookupJavaMetric("consumer-metrics:io-wait-ratio"); ok {
		t.Error("the catalog is by attribute name, not group:name")
	}
	// Each client's list has its own and the common metrics, not the
	// other client's.
	has := func(ms []JavaMetric, name string) bool {
		for _, m := range ms {
			if m.Name == name {
				return true
			}
		}
		return false
	}
	prod, cons := JavaMetricsOf(rundoc.Producer), JavaMetricsOf(rundoc.Consumer)
	switch {
	case !has(prod, "record-queue-time-avg") || !has(prod, "io-wait-ratio") || has(prod, "poll-idle-ratio-avg"):
		t.Error("the producer's list is wrong")
	case !has(cons, "poll-idle-ratio-avg") || !has(cons, "io-wait-ratio") || has(cons, "record-queue-time-avg"):
		t.Error("the consumer's list is wrong")
	case !has(prod, "records-per-request-avg") || !has(cons, "records-per-request-avg"):
		t.Error("a metric of both clients is missing from one list")
	case JavaMetricsOf(rundoc.Writepath) != nil:
		t.Error("the write path has Java metrics")
	}
}

// TestParseOutputConsumerMetricsAlone: a consumer's --print-metrics
// block pasted without the header line or the tool's summary (as in
// KAFKA-19296) imports as a consumer run, its values with the catalog's
// units.
func TestParseOutputConsumerMetricsAlone(t *testing.T) {
	in := `consumer-fetch-manager-metrics:bytes-consumed-rate:{client-id=perf-consumer-1}   : 48869612.029
consumer-fetch-manager-metrics:fetch-latency-avg:{client-id=perf-consumer-1}     : 10.375
consumer-metrics:io-wait-ratio:{client-id=perf-consumer-1}                       : 0.412
consumer-metrics:io-wait-time-ns-avg:{client-id=perf-consumer-1}                 : 81234.500
consumer-metrics:poll-idle-ratio-avg:{client-id=perf-consumer-1}                 : 0.871
consumer-metrics:select-rate:{client-id=perf-consumer-1}                         : 5012.334
consumer-metrics:time-between-poll-avg:{client-id=perf-consumer-1}               : 1.204
consumer-coordinator-metrics:commit-latency-avg:{client-id=perf-consumer-1}      : NaN
consumer-metrics:some-new-metric:{client-id=perf-consumer-1}                     : 7.000
`
	im, err := ParseOutput(strings.NewReader(in))
	if err != nil {
		t.Fatal(err)
	}
	if im.Tool != ToolConsumer {
		t.Errorf("tool %q, want consumer", im.Tool)
	}
	want := map[string][2]string{
		"consumer-fetch-manager-metrics:bytes-consumed-rate": {"bytes/s", "higher"},
		"consumer-fetch-manager-metrics:fetch-latency-avg":   {"ms", "lower"},
		"consumer-metrics:io-wait-ratio":                     {"ratio", ""},
		"consumer-metrics:io-wait-time-ns-avg":               {"ns", ""},
		"consumer-metrics:poll-idle-ratio-avg":               {"ratio", ""},
		"consumer-metrics:select-rate":                       {"/s", ""},
		"consumer-metrics:time-between-poll-avg":             {"ms", ""},
		"consumer-coordinator-metrics:commit-latency-avg":    {"ms", "lower"},
		// Unknown: kept, no unit or direction.
		"consumer-metrics:some-new-metric": {"", ""},
	}
	if len(im.Metrics) != len(want) {
		t.Errorf("%d metrics, want %d: %+v", len(im.Metrics), len(want), im.Metrics)
	}
	for _, m := range im.Metrics {
		w, ok := want[m.Name]
		if !ok {
			t.Errorf("unexpected metric %s", m.Name)
			continue
		}
		if m.Unit != w[0] || m.Better != w[1] {
			t.Errorf("%s: unit %q, better %q; want %q, %q", m.Name, m.Unit, m.Better, w[0], w[1])
		}
	}
	if notes := strings.Join(im.Notes, "\n"); !strings.Contains(notes, "no kafka-consumer-perf-test summary line") {
		t.Errorf("notes %q do not say the summary is missing", notes)
	}
	f := im.Figures()
	if len(f.Metrics) != len(want)-1 {
		t.Errorf("figures keep %d metrics, want %d (NaN left out)", len(f.Metrics), len(want)-1)
	}
}
