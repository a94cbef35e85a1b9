package omb

import (
	"encoding/json"
	"fmt"
	"math"
	"reflect"
	"testing"

	"github.com/kbench/kbench/internal/hdr"
	"github.com/kbench/kbench/internal/rundoc"
)

// chartKeys are the keys OMB's bin/create_charts.py reads of each
// result: its grouping by workload, its charts' labels (driver), its
// seven time-series charts and its three quantile charts.
var chartKeys = map[string]string{
	"workload":                               "string",
	"driver":                                 "string",
	"publishLatency99pct":                    "list",
	"publishDelayLatency99pct":               "list",
	"publishRate":                            "list",
	"publishErrorRate":                       "list",
	"endToEndLatency95pct":                   "list",
	"consumeRate":                            "list",
	"endToEndLatencyAvg":                     "list",
	"aggregatedPublishLatencyQuantiles":      "object",
	"aggregatedPublishDelayLatencyQuantiles": "object",
	"aggregatedEndToEndLatencyQuantiles":     "object",
}

// newHist is an empty histogram of the run layout.
func newHist() *hdr.Histogram {
	return hdr.New(rundoc.HistogramLowest, rundoc.HistogramHighest, rundoc.HistogramDigits)
}

// record adds v to h, failing the test on a value out of range.
func record(t *testing.T, h *hdr.Histogram, v int64) {
	t.Helper()
	if err := h.RecordValue(v); err != nil {
		t.Fatal(err)
	}
}

// kindMetrics are a histogram's metrics as kbench's runner reports them
// (ms), for the suffixes given.
func kindMetrics(kind string, h *hdr.Histogram, sfx ...string) []rundoc.Metric {
	var out []rundoc.Metric
	for _, s := range sfx {
		j := indexOf(suffixes, s)
		out = append(out, rundoc.Metric{Name: kind + "-" + s, Value: figure(h, quantiles[j], false), Unit: "ms", Better: rundoc.LowerIsBetter})
	}
	return out
}

func indexOf(xs []string, x string) int {
	for i, s := range xs {
		if s == x {
			return i
		}
	}
	return -1
}

// e2eRun is a fixed kbench e2e run in rate mode, as the store gives it:
// 25 s measured at 200 records/s, with its 1 s interval histograms of
// e2e latency, publish latency and publish delay (a spike of each in
// one second), its window histograms (their sums), a 250 ms series and
// its metrics computed from the window histograms as the runner does.
func e2eRun(t *testing.T) Source {
	t.Helper()
	kinds := []string{rundoc.HistE2ELatency, rundoc.HistPublishLatency, rundoc.HistPublishDelay}
	window := map[string]*hdr.Histogram{}
	for _, k := range kinds {
		window[k] = newHist()
	}
	var intervals []rundoc.Histogram
	for s := range 25 {
		for _, k := range kinds {
			h := newHist()
			spike := k == rundoc.HistE2ELatency && s == 7 || k == rundoc.HistPublishLatency && s == 18 || k == rundoc.HistPublishDelay && s == 12
			n := 200
			if spike {
				// The spike is one of the second's 200 records.
				n = 199
			}
			for i := range n {
				switch k {
				case rundoc.HistE2ELatency:
					record(t, h, int64(1500+(i*37+s*101)%900))
				case rundoc.HistPublishLatency:
					record(t, h, int64(600+(i*53+s*17)%400))
				default:
					record(t, h, int64(2+(i*13)%20))
				}
			}
			switch {
			case k == rundoc.HistE2ELatency && s == 7:
				record(t, h, 25_000)
			case k == rundoc.HistPublishLatency && s == 18:
				record(t, h, 14_000)
			case k == rundoc.HistPublishDelay && s == 12:
				record(t, h, 900)
			}
			if err := window[k].Merge(h); err != nil {
				t.Fatal(err)
			}
			intervals = append(intervals, rundoc.Histogram{Kind: k, Scope: rundoc.HistogramInterval, StartS: float64(s), EndS: float64(s + 1),
				Count: h.TotalCount(), Data: h.Encode()})
		}
	}
	var hs []rundoc.Histogram
	for _, k := range kinds {
		hs = append(hs, rundoc.Histogram{Kind: k, Scope: rundoc.HistogramWindow, EndS: 25, Count: window[k].TotalCount(), Data: window[k].Encode()})
	}
	run := &rundoc.Run{ID: 42, Label: "kafka-go", Workload: rundoc.E2E, Source: rundoc.SourceLaunched,
		Spec:        `{"workload":"e2e","params":{"record-size":512,"partitions":4,"throughput":200}}`,
		Measurement: &rundoc.Measurement{WindowSeconds: 25, MeasuredRecords: 5000}}
	for k := range 100 {
		run.Series = append(run.Series, rundoc.SeriesPoint{T: 0.25 * float64(k+1), Records: 50, Bytes: 50 * 512, RecordsPerSec: 200})
	}
	run.Metrics = append(run.Metrics, rundoc.Metric{Name: "record-send-rate", Value: 200, Unit: "records/s", Better: rundoc.HigherIsBetter},
		rundoc.Metric{Name: "consume-rate", Value: 200, Unit: "records/s", Better: rundoc.HigherIsBetter})
	run.Metrics = append(run.Metrics, kindMetrics(rundoc.HistE2ELatency, window[rundoc.HistE2ELatency], suffixes...)...)
	run.Metrics = append(run.Metrics, kindMetrics(rundoc.HistPublishLatency, window[rundoc.HistPublishLatency], "avg", "p50", "p95", "p99", "p999", "max")...)
	run.Metrics = append(run.Metrics, kindMetrics(rundoc.HistPublishDelay, window[rundoc.HistPublishDelay], "avg", "p50", "p95", "p99", "p999", "max")...)
	return Source{Run: run, Window: hs, Intervals: intervals}
}

// producerRun is an older kbench producer run: a series and metrics,
// no histograms, no error.
func producerRun() Source {
	run := &rundoc.Run{ID: 9, Label: "", Workload: rundoc.Producer, Source: rundoc.SourceLaunched,
		Spec: `{"workload":"producer","params":{"record-size":100,"partitions":1,"threads":2}}`}
	for k := range 12 {
		run.Series = append(run.Series, rundoc.SeriesPoint{T: float64(k+1) * 2, RecordsPerSec: float64(1000 * (k + 1)), LatencyAvgMs: 3, LatencyMaxMs: 9})
	}
	run.Metrics = []rundoc.Metric{
		{Name: "record-latency-p50", Value: 2.5, Unit: "ms"}, {Name: "record-latency-p99", Value: 8.25, Unit: "ms"},
		{Name: "record-latency-max", Value: 9, Unit: "ms"}, {Name: "record-error-total", Value: 0, Unit: "records"},
	}
	return Source{Run: run}
}

// asStored is an OMB import as the store gives it back.
func asStored(t *testing.T, r Run, id uint) *rundoc.Run {
	t.Helper()
	spec, err := json.Marshal(r.Spec)
	if err != nil {
		t.Fatal(err)
	}
	// Through JSON, as the store keeps params and documents.
	var env rundoc.Environment
	var m rundoc.Measurement
	for _, p := range []struct{ in, out any }{{r.Environment, &env}, {r.Measurement, &m}} {
		b, err := json.Marshal(p.in)
		if err != nil {
			t.Fatal(err)
		}
		if err := json.Unmarshal(b, p.out); err != nil {
			t.Fatal(err)
		}
	}
	return &rundoc.Run{ID: id, Label: r.Label, Workload: r.Workload, Source: rundoc.SourceImported, Spec: string(spec),
		Metrics: r.Metrics, Series: r.Series, Environment: &env, Measurement: &m}
}

// sampleRun is the hand-written OMB result imported and stored.
func sampleRun(t *testing.T) (*Parsed, Source) {
	t.Helper()
	p, err := Parse(readSample(t))
	if err != nil {
		t.Fatal(err)
	}
	return p, Source{Run: asStored(t, p.Run(sampleFile), 3)}
}

// TestExportChartKeys: whatever the run (an e2e run with histograms, an
// old producer run, a consumer run without a series, an OMB import),
// its export has every key OMB writes, none null, and each key
// create_charts.py reads of the JSON kind it reads it as.
func TestExportChartKeys(t *testing.T) {
	_, imported := sampleRun(t)
	sources := map[string]Source{
		"e2e":      e2eRun(t),
		"producer": producerRun(),
		"consumer": {Run: &rundoc.Run{ID: 5, Label: "c", Workload: rundoc.Consumer, Series: []rundoc.SeriesPoint{{T: 1, RecordsPerSec: 10}}}},
		"empty":    {Run: &rundoc.Run{ID: 6, Workload: rundoc.Consumer}},
		"omb":      imported,
	}
	for name, s := range sources {
		t.Run(name, func(t *testing.T) {
			r, err := Export(s)
			if err != nil {
				t.Fatal(err)
			}
			data, err := json.Marshal(r)
			if err != nil {
				t.Fatal(err)
			}
			var doc map[string]any
			if err := json.Unmarshal(data, &doc); err != nil {
				t.Fatal(err)
			}
			for _, k := range Fields() {
				if v, ok := doc[k]; !ok || v == nil {
					t.Errorf("%s: missing or null", k)
				}
			}
			if len(doc) != len(Fields()) {
				t.Errorf("%d keys, OMB writes %d", len(doc), len(Fields()))
			}
			for k, kind := range chartKeys {
				var ok bool
				switch kind {
				case "string":
					_, ok = doc[k].(string)
				case "list":
					_, ok = doc[k].([]any)
				case "object":
					_, ok = doc[k].(map[string]any)
				}
				if !ok {
					t.Errorf("%s is %T, create_charts.py reads a %s", k, doc[k], kind)
				}
			}
			// And OMB's own reader of it, Parse, which refuses a result
			// of no window (the empty run's).
			if _, err := Parse(data); err != nil && name != "empty" {
				t.Errorf("the export does not parse: %v", err)
			}
		})
	}
}

// TestExportE2E: the fixed e2e run's export: three windows (10, 10 and
// the last 5 s), rates from its series and its publish-latency
// intervals, a backlog of none, no error rate (an e2e run counts no
// errors), each window's latencies from its interval histograms,
// aggregates from the window histograms; and its golden file.
func TestExportE2E(t *testing.T) {
	s := e2eRun(t)
	r, err := Export(s)
	if err != nil {
		t.Fatal(err)
	}
	if r.Workload != "kbench-e2e-1-topic-4-partitions-512b" || r.Driver != "kafka-go" || r.MessageSize != 512 || r.Partitions != 4 ||
		r.Topics != 1 || r.ProducersPerTopic != 1 || r.ConsumersPerTopic != 1 {
		t.Errorf("names: %q %q %d %d", r.Workload, r.Driver, r.MessageSize, r.Partitions)
	}
	near := func(what string, got, want []float64) {
		t.Helper()
		if len(got) != len(want) {
			t.Errorf("%s: %v, want %v", what, got, want)
			return
		}
		for i := range got {
			if math.Abs(got[i]-want[i]) > 1e-9 {
				t.Errorf("%s: %v, want %v", what, got, want)
				return
			}
		}
	}
	near("publishRate", r.PublishRate, []float64{200, 200, 200})
	near("consumeRate", r.ConsumeRate, []float64{200, 200, 200})
	if fmt.Sprint(r.Backlog) != "[0 0 0]" || len(r.PublishErrorRate) != 0 {
		t.Errorf("backlog %v, error rate %v", r.Backlog, r.PublishErrorRate)
	}
	// The spike of second 7 is the first window's max; of second 18
	// the second's publish max; of second 12 the second's delay max.
	if r.EndToEndLatencyMax[0] != 25.007 || r.EndToEndLatencyMax[1] >= 3 || r.PublishLatencyMax[1] != 14.007 || r.PublishDelayLatencyMax[1] != 900 ||
		r.PublishDelayLatencyMax[2] != 21 {
		t.Errorf("maxima: e2e %v, publish %v, delay %v", r.EndToEndLatencyMax, r.PublishLatencyMax, r.PublishDelayLatencyMax)
	}
	e2e := s.Run.Metrics
	for _, m := range e2e {
		if m.Name == "e2e-latency-p99" && m.Value != r.AggregatedEndToEndLatency99pct {
			t.Errorf("aggregated e2e p99 %v, the run's metric %v", r.AggregatedEndToEndLatency99pct, m.Value)
		}
	}
	qs := r.AggregatedEndToEndLatencyQuantiles
	if len(qs) < 100 || qs[0].Percentile != 0 || qs[len(qs)-1] != (Quantile{Percentile: 100, Value: 25.007}) {
		t.Errorf("e2e quantiles: %d entries, first %v, last %v", len(qs), qs[0], qs[len(qs)-1])
	}
	golden(t, "testdata/export-e2e.golden.json", r)
}

// TestExportWithoutHistograms: an older producer run gives its send rate
// from its series (averaged over each 10 s window by time), no window
// latencies (no interval histograms), aggregates from its metrics (0
// for the ones it has none of), an error rate of 0 throughout (it
// counted none), and nothing for a consumer it did not have.
func TestExportWithoutHistograms(t *testing.T) {
	r, err := Export(producerRun())
	if err != nil {
		t.Fatal(err)
	}
	// Points of 2 s at 1000·k records/s: the first window holds k=1..5.
	if fmt.Sprint(r.PublishRate) != "[3000 8000 11500]" || fmt.Sprint(r.PublishErrorRate) != "[0 0 0]" || len(r.ConsumeRate) != 0 {
		t.Errorf("rates: publish %v, errors %v, consume %v", r.PublishRate, r.PublishErrorRate, r.ConsumeRate)
	}
	if len(r.PublishLatency99pct) != 0 || r.AggregatedPublishLatency99pct != 8.25 || r.AggregatedPublishLatency75pct != 0 ||
		r.AggregatedPublishLatencyMax != 9 || len(r.AggregatedPublishLatencyQuantiles) != 0 {
		t.Errorf("latency: %v, aggregates %v %v %v", r.PublishLatency99pct, r.AggregatedPublishLatency99pct, r.AggregatedPublishLatency75pct, r.AggregatedPublishLatencyMax)
	}
	if r.Driver != "run-9" || r.ProducersPerTopic != 2 || r.ConsumersPerTopic != 0 || r.Workload != "kbench-producer-1-topic-1-partitions-100b" {
		t.Errorf("names: %q %q %d %d", r.Workload, r.Driver, r.ProducersPerTopic, r.ConsumersPerTopic)
	}
}

// TestExportOMBImportGivesItBack: an OMB result imported and exported
// is the result again, to the precision kbench keeps it in (the publish
// delay's µs through ms), with the workload named as it was.
func TestExportOMBImportGivesItBack(t *testing.T) {
	p, s := sampleRun(t)
	r, err := Export(s)
	if err != nil {
		t.Fatal(err)
	}
	want := p.Result
	fillEmpty(&want)
	sameResults(t, r, &want)
	s.Workload = "renamed"
	if r, _ := Export(s); r.Workload != "renamed" {
		t.Errorf("workload %q, want the one asked for", r.Workload)
	}
}

// TestExportImportRoundTrip: a kbench run exported, imported as OMB's
// and exported again agrees: the import's metrics are the run's (its
// aggregated latencies, the same histograms' figures; its rates over
// whole windows), and the second export is the first.
func TestExportImportRoundTrip(t *testing.T) {
	s := e2eRun(t)
	// Whole windows, so that OMB's 10 s each is the run's time.
	s.Run.Measurement.WindowSeconds = 20
	s.Run.Series = s.Run.Series[:80]
	var intervals []rundoc.Histogram
	for _, h := range s.Intervals {
		if h.StartS < 20 {
			intervals = append(intervals, h)
		}
	}
	s.Intervals = intervals
	first, err := Export(s)
	if err != nil {
		t.Fatal(err)
	}
	data, err := json.Marshal(first)
	if err != nil {
		t.Fatal(err)
	}
	p, err := Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	imported := p.Run("export.json")
	for _, m := range s.Run.Metrics {
		got, ok := metric(imported, m.Name)
		if !ok {
			t.Errorf("%s: not imported", m.Name)
			continue
		}
		// A window histogram's figure is exact; the publish delay goes
		// through whole µs, as OMB keeps it.
		tol := 1e-9
		if m.Name == rundoc.HistPublishDelay+"-avg" {
			tol = 1e-6
		}
		if math.Abs(got.Value-m.Value) > tol*math.Max(1, m.Value) || got.Unit != m.Unit {
			t.Errorf("%s: imported %v %s, the run's %v %s", m.Name, got.Value, got.Unit, m.Value, m.Unit)
		}
	}
	second, err := Export(Source{Run: asStored(t, imported, 43)})
	if err != nil {
		t.Fatal(err)
	}
	sameResults(t, second, first)
}

// sameResults compares two results field by field: names and counts
// exactly, numbers to 1e-9 of their size.
func sameResults(t *testing.T, got, want *Result) {
	t.Helper()
	gf, wf := fieldsOf(got), fieldsOf(want)
	close := func(a, b float64) bool { return math.Abs(a-b) <= 1e-9*math.Max(1, math.Abs(b)) }
	for i := range gf {
		g, w := reflect.ValueOf(gf[i].ptr).Elem().Interface(), reflect.ValueOf(wf[i].ptr).Elem().Interface()
		ok := true
		switch w := w.(type) {
		case []float64:
			g := g.([]float64)
			ok = len(g) == len(w)
			for j := 0; ok && j < len(w); j++ {
				ok = close(g[j], w[j])
			}
		case float64:
			ok = close(g.(float64), w)
		case Quantiles:
			g := g.(Quantiles)
			ok = len(g) == len(w)
			for j := 0; ok && j < len(w); j++ {
				ok = g[j].Percentile == w[j].Percentile && close(g[j].Value, w[j].Value)
			}
		default:
			ok = reflect.DeepEqual(g, w)
		}
		if !ok {
			t.Errorf("%s: %v, want %v", gf[i].name, g, w)
		}
	}
}

// TestExportBoundsWindows: a run whose measurement claims an absurd
// window (a hand-made result.json) exports at most MaxWindows windows.
func TestExportBoundsWindows(t *testing.T) {
	r, err := Export(Source{Run: &rundoc.Run{ID: 1, Workload: rundoc.Producer, Measurement: &rundoc.Measurement{WindowSeconds: 1e15},
		Metrics: []rundoc.Metric{{Name: "record-error-total", Unit: "records"}}}})
	if err != nil {
		t.Fatal(err)
	}
	if len(r.PublishErrorRate) != MaxWindows {
		t.Errorf("%d windows, want at most %d", len(r.PublishErrorRate), MaxWindows)
	}
}
