package ui

import (
	"strings"
	"testing"
	"time"

	"github.com/kbench/kbench/internal/rundoc"
	"github.com/kbench/kbench/internal/testutil/golden"
)

// TestRunPageUndecodableDocuments: a run whose stored documents do not
// decode (DocumentErr) shows the stored text raw, escaped, rather than
// nothing or an error; a document that does decode is still shown
// decoded beside one that does not.
func TestRunPageUndecodableDocuments(t *testing.T) {
	u := newTestUI(t)
	const measurementRaw = "[1]"
	const measurementNotice = "The stored measurement could not be read; here it is as stored."
	const environmentNotice = "The stored environment could not be read; here it is as stored."

	bad := finishedRun()
	bad.SetDocuments(`{not json <script>alert(1)</script>`, measurementRaw)
	if bad.DocumentErr == nil || bad.Environment != nil || bad.Measurement != nil {
		t.Fatalf("fixture: documents %+v %+v, error %v; want neither decoded, an error", bad.Environment, bad.Measurement, bad.DocumentErr)
	}
	v, err := NewRunView(bad, 0)
	if err != nil {
		t.Fatal(err)
	}
	page := render(t, u, "run", v)
	for _, want := range []string{
		measurementNotice, `<pre class="code">[1]</pre>`,
		environmentNotice, `<pre class="code">{not json &lt;script&gt;alert(1)&lt;/script&gt;</pre>`,
	} {
		if !strings.Contains(page, want) {
			t.Errorf("both undecodable: page lacks %q", want)
		}
	}
	for _, unwanted := range []string{"<dt>Measured records</dt>", "<dt>Host</dt>", "<script>alert(1)"} {
		if strings.Contains(page, unwanted) {
			t.Errorf("both undecodable: page has %q", unwanted)
		}
	}

	// Only the measurement is unreadable: the environment (here one that
	// holds only a configuration) reads as it does on its own.
	mixed := finishedRun()
	mixed.SetDocuments(`{"config":{"mode":"raw","settings":[{"name":"compression.type","value":"zstd"}]}}`, measurementRaw)
	if mixed.DocumentErr == nil || mixed.Environment == nil || mixed.Measurement != nil {
		t.Fatalf("fixture: environment %+v, measurement %+v, error %v; want the environment decoded, an error", mixed.Environment, mixed.Measurement, mixed.DocumentErr)
	}
	v, err = NewRunView(mixed, 0)
	if err != nil {
		t.Fatal(err)
	}
	if v.MeasurementRaw != measurementRaw || v.EnvironmentRaw != "" {
		t.Errorf("measurement unreadable: raw measurement %q, raw environment %q; want %q and none", v.MeasurementRaw, v.EnvironmentRaw, measurementRaw)
	}
	page = render(t, u, "run", v)
	if !strings.Contains(page, measurementNotice) || !strings.Contains(page, `<pre class="code">[1]</pre>`) {
		t.Error("measurement unreadable: the page does not show it as stored")
	}
	if strings.Contains(page, environmentNotice) || !strings.Contains(page, "<dt>compression.type</dt><dd>zstd</dd>") {
		t.Error("measurement unreadable: the readable environment is not shown as read")
	}

	// Only the environment is unreadable: the measurement is shown read.
	mixed.SetDocuments("{not json", finishedRun().Documents.Measurement)
	v, err = NewRunView(mixed, 0)
	if err != nil {
		t.Fatal(err)
	}
	if v.EnvironmentRaw != "{not json" || v.MeasurementRaw != "" || len(v.Measurement) == 0 {
		t.Errorf("environment unreadable: raw environment %q, raw measurement %q, measurement %v", v.EnvironmentRaw, v.MeasurementRaw, v.Measurement)
	}
	page = render(t, u, "run", v)
	if !strings.Contains(page, environmentNotice) || strings.Contains(page, measurementNotice) || !strings.Contains(page, "<dt>Measured records</dt><dd>900,000</dd>") {
		t.Error("environment unreadable: the page does not show the raw environment beside the measurement as read")
	}
}

// importedRun is a run imported from kafka-producer-perf-test's output,
// its documents as the import stores them (store.Outcome from the
// server's importedOutcome).
func importedRun() *rundoc.Run {
	at := t0.Add(2 * time.Minute)
	r := &rundoc.Run{ID: 46, Label: "kafka tool", Workload: rundoc.Producer, Status: rundoc.StatusSucceeded, Source: rundoc.SourceImported,
		Spec:      `{"workload":"imported","files":["perf.txt"],"tool":"producer"}`,
		Output:    "250000 records sent, 50000.0 records/sec (12.21 MB/sec), 3.10 ms avg latency, 41.00 ms max latency.\n500000 records sent, 50000.000000 records/sec (12.21 MB/sec), 3.20 ms avg latency, 45.00 ms max latency, 2 ms 50th, 7 ms 95th, 12 ms 99th, 40 ms 99.9th.\n",
		CreatedAt: at, FinishedAt: &at,
		Metrics: []rundoc.Metric{
			{Name: "records-sent", Value: 500000, Unit: "records"},
			{Name: "record-send-rate", Value: 50000, Unit: "records/s", Better: rundoc.HigherIsBetter},
			{Name: "record-latency-avg", Value: 3.2, Unit: "ms", Better: rundoc.LowerIsBetter},
			{Name: "record-latency-p99", Value: 12, Unit: "ms", Better: rundoc.LowerIsBetter},
		},
		Series: []rundoc.SeriesPoint{
			{T: 5, Records: 250000, RecordsPerSec: 50000, MBPerSec: 12.21, LatencyAvgMs: 3.1, LatencyMaxMs: 41},
			{T: 10, Records: 250000, RecordsPerSec: 50000, MBPerSec: 12.21, LatencyAvgMs: 3.3, LatencyMaxMs: 45},
		},
	}
	r.SetDocuments(
		`{"source":"imported","tool":"kafka-producer-perf-test","kafka_go_version":"","broker":"imported: kafka-producer-perf-test does not print its environment"}`,
		`{"source":"imported","tool":"kafka-producer-perf-test","lines":2,"warmup_records":0,"measured_records":500000,"window_seconds":10,"cpu_samples":0,"cpu_sample_interval_ms":0,`+
			`"notes":["imported from Kafka's kafka-producer-perf-test output","the last line is the tool's summary"]}`)
	return r
}

// TestGoldenRunImported: an imported run's page shows what the import
// noted, where it came from, and none of what kbench measures of its own
// runs (the golden was checked equal to the page before the run contract
// moved to rundoc, for the same stored documents).
func TestGoldenRunImported(t *testing.T) {
	u := newTestUI(t)
	r := importedRun()
	if r.DocumentErr != nil || r.Measurement == nil || r.Measurement.Source != rundoc.SourceImported || r.Measurement.Lines != 2 {
		t.Fatalf("fixture: measurement %+v, error %v", r.Measurement, r.DocumentErr)
	}
	v, err := NewRunView(r, 0)
	if err != nil {
		t.Fatal(err)
	}
	if v.Measurement != nil || v.MeasurementRaw != "" || v.EnvironmentRaw != "" || !v.HideEmpty {
		t.Errorf("imported run: measurement %v, raw %q/%q, hide empty %v; want no measurement of kbench's, nothing raw, empty sections hidden",
			v.Measurement, v.MeasurementRaw, v.EnvironmentRaw, v.HideEmpty)
	}
	v.CSRF = "tok"
	page := render(t, u, "run", v)
	for _, want := range []string{
		"imported from Kafka&#39;s kafka-producer-perf-test output",
		"the last line is the tool&#39;s summary",
		"<dt>Broker</dt><dd>imported: kafka-producer-perf-test does not print its environment</dd>",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("imported run page lacks %q", want)
		}
	}
	for _, unwanted := range []string{"<dt>Measured records</dt>", "<dt>Warm-up records</dt>", "<dt>CPU samples</dt>", "could not be read"} {
		if strings.Contains(page, unwanted) {
			t.Errorf("imported run page has %q", unwanted)
		}
	}
	golden.Check(t, "run_imported.html", page)
}
