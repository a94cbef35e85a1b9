package omb

import (
	"bytes"
	"encoding/json"
	"errors"
	"flag"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/kbench/kbench/internal/rundoc"
)

// update rewrites the golden files from what the code gives.
var update = flag.Bool("update", false, "rewrite the golden files")

// sampleFile is a result written by hand in OMB's format (Jackson's
// pretty printer), with the numbers of a one-minute Kafka test at 50,000
// messages/s: six windows.
const sampleFile = "testdata/kafka-1-topic-16-partitions-1kb.json"

func readSample(t testing.TB) []byte {
	t.Helper()
	data, err := os.ReadFile(sampleFile)
	if err != nil {
		t.Fatal(err)
	}
	return data
}

// sampleWith is the sample result with its fields changed: a value
// replaces the field's JSON (nil removes the field).
func sampleWith(t testing.TB, changes map[string]any) []byte {
	t.Helper()
	ms, err := objectFields(readSample(t), "")
	if err != nil {
		t.Fatal(err)
	}
	var b bytes.Buffer
	b.WriteByte('{')
	first := true
	write := func(k string, v []byte) {
		if !first {
			b.WriteByte(',')
		}
		first = false
		kj, _ := json.Marshal(k)
		b.Write(kj)
		b.WriteByte(':')
		b.Write(v)
	}
	done := map[string]bool{}
	for _, kv := range ms {
		c, ok := changes[kv.key]
		done[kv.key] = true
		switch {
		case !ok:
			write(kv.key, kv.value)
		case c == nil:
		default:
			write(kv.key, rawOf(t, c))
		}
	}
	for k, c := range changes {
		if !done[k] && c != nil {
			write(k, rawOf(t, c))
		}
	}
	b.WriteByte('}')
	return b.Bytes()
}

// rawOf is a change's JSON: a json.RawMessage as it is, anything else
// marshalled.
func rawOf(t testing.TB, v any) []byte {
	if r, ok := v.(json.RawMessage); ok {
		return r
	}
	out, err := json.Marshal(v)
	if err != nil {
		t.Fatal(err)
	}
	return out
}

// TestParseSample: the hand-written result reads whole: its names,
// windows, lists, aggregated figures and quantile maps in percentile
// order.
func TestParseSample(t *testing.T) {
	p, err := Parse(readSample(t))
	if err != nil {
		t.Fatal(err)
	}
	r := p.Result
	if r.Workload != "1-topic-16-partitions-1kb" || r.Driver != "Kafka" || r.MessageSize != 1024 || r.Topics != 1 || r.Partitions != 16 ||
		r.ProducersPerTopic != 1 || r.ConsumersPerTopic != 1 {
		t.Errorf("workload fields: %+v", r)
	}
	if p.Windows != 6 || len(p.Unknown) != 0 {
		t.Errorf("windows %d, unknown %v", p.Windows, p.Unknown)
	}
	if r.PublishLatency99pct[3] != 5.26 || r.Backlog[0] != 25 || r.PublishDelayLatencyMax[0] != 1873 || r.EndToEndLatency999pct[1] != 13 {
		t.Errorf("lists: %v %v %v %v", r.PublishLatency99pct, r.Backlog, r.PublishDelayLatencyMax, r.EndToEndLatency999pct)
	}
	if r.AggregatedPublishLatency99pct != 5.297 || r.AggregatedPublishDelayLatency9999pct != 236 || r.AggregatedEndToEndLatencyMax != 52 {
		t.Errorf("aggregates: %v %v %v", r.AggregatedPublishLatency99pct, r.AggregatedPublishDelayLatency9999pct, r.AggregatedEndToEndLatencyMax)
	}
	qs := r.AggregatedPublishLatencyQuantiles
	if len(qs) != 19 || qs[0] != (Quantile{Percentile: 0, Value: 0.412}) || qs[18] != (Quantile{Percentile: 100, Value: 44.351}) || qs[12].Percentile != 99.90234375 {
		t.Errorf("publish quantiles: %v", qs)
	}
	for _, f := range Fields() {
		if !p.Has(f) {
			t.Errorf("the sample has every field, Has(%q) is false", f)
		}
	}
}

// TestParseRefuses: each malformed result is refused with an error
// naming the field, and saying what is wrong with it.
func TestParseRefuses(t *testing.T) {
	long := strings.Repeat("x", MaxName+1)
	cases := []struct {
		name      string
		data      []byte
		field     string // the *FieldError's field
		msgSubstr string
	}{
		{"not an object", []byte(`[1, 2]`), "", "must be a JSON object"},
		{"empty", []byte(``), "", "is empty"},
		{"blank", []byte("  \n"), "", "is empty"},
		{"a number", []byte(`42`), "", "not a number"},
		{"broken JSON", []byte(`{"workload": "w",`), "", "invalid JSON"},
		{"more after the object", append(readSample(t), []byte(` {}`)...), "", "more after the object"},
		{"not UTF-8", []byte("{\"workload\": \"\xff\"}"), "", "not UTF-8"},
		{"a key twice", []byte(`{"workload": "a", "driver": "d", "workload": "b", "publishRate": [1]}`), "workload", "appears twice"},
		{"no workload", sampleWith(t, map[string]any{"workload": nil}), "workload", "missing"},
		{"null driver", sampleWith(t, map[string]any{"driver": json.RawMessage(`null`)}), "driver", "missing"},
		{"workload a number", sampleWith(t, map[string]any{"workload": 7}), "workload", "is a number, want a string"},
		{"driver too long", sampleWith(t, map[string]any{"driver": long}), "driver", "at most 200"},
		{"a latency a string", sampleWith(t, map[string]any{"publishLatency99pct": json.RawMessage(`[1, 2, 3, "4", 5, 6]`)}),
			"publishLatency99pct[3]", "is a string, want a number"},
		{"a latency null", sampleWith(t, map[string]any{"endToEndLatencyAvg": json.RawMessage(`[1, null, 3, 4, 5, 6]`)}),
			"endToEndLatencyAvg[1]", "is null"},
		{"a list an object", sampleWith(t, map[string]any{"consumeRate": map[string]int{"a": 1}}), "consumeRate", "want a list"},
		{"a negative rate", sampleWith(t, map[string]any{"publishRate": []float64{1, 2, -3, 4, 5, 6}}), "publishRate[2]", "want a number ≥ 0"},
		{"a number out of range", sampleWith(t, map[string]any{"publishRate": json.RawMessage(`[1, 2, 3, 4, 5, 1e400]`)}), "publishRate[5]", "not a number a double holds"},
		{"a fractional backlog", sampleWith(t, map[string]any{"backlog": json.RawMessage(`[1, 2.5, 3, 4, 5, 6]`)}), "backlog[1]", "want a whole number"},
		{"a fractional delay", sampleWith(t, map[string]any{"aggregatedPublishDelayLatency99pct": 9.5}), "aggregatedPublishDelayLatency99pct", "want a whole number"},
		{"a negative aggregate", sampleWith(t, map[string]any{"aggregatedEndToEndLatency99pct": -1}), "aggregatedEndToEndLatency99pct", "≥ 0"},
		{"fractional topics", sampleWith(t, map[string]any{"topics": 1.5}), "topics", "whole number"},
		{"topics a string", sampleWith(t, map[string]any{"topics": "1"}), "topics", "is a string"},
		{"huge partitions", sampleWith(t, map[string]any{"partitions": 1e12}), "partitions", "whole number"},
		{"a list too short", sampleWith(t, map[string]any{"publishLatency50pct": []float64{1, 2, 3}}), "publishLatency50pct", "has 3 values, but publishRate has 6"},
		{"no window", []byte(`{"workload": "w", "driver": "d", "publishRate": [], "consumeRate": []}`), "publishRate", "holds no 10 s window"},
		{"only names", []byte(`{"workload": "w", "driver": "d"}`), "publishRate", "holds no 10 s window"},
		{"quantiles a list", sampleWith(t, map[string]any{"aggregatedPublishLatencyQuantiles": []int{1}}), "aggregatedPublishLatencyQuantiles", "want an object"},
		{"a quantile key not a number", sampleWith(t, map[string]any{"aggregatedEndToEndLatencyQuantiles": json.RawMessage(`{"50.0": 4, "p99": 8}`)}),
			"aggregatedEndToEndLatencyQuantiles.p99", "not a percentile"},
		{"a quantile past 100", sampleWith(t, map[string]any{"aggregatedEndToEndLatencyQuantiles": json.RawMessage(`{"100.5": 4}`)}),
			"aggregatedEndToEndLatencyQuantiles.100.5", "not a percentile"},
		{"a quantile twice", sampleWith(t, map[string]any{"aggregatedPublishLatencyQuantiles": json.RawMessage(`{"99": 4, "99.0": 5}`)}),
			"aggregatedPublishLatencyQuantiles.99.0", "appears twice"},
		{"a quantile key twice", sampleWith(t, map[string]any{"aggregatedPublishLatencyQuantiles": json.RawMessage(`{"99.0": 4, "99.0": 5}`)}),
			"aggregatedPublishLatencyQuantiles.99.0", "appears twice"},
		{"a quantile value a string", sampleWith(t, map[string]any{"aggregatedPublishDelayLatencyQuantiles": json.RawMessage(`{"50.0": "3"}`)}),
			"aggregatedPublishDelayLatencyQuantiles.50.0", "is a string"},
		{"a quantile NaN key", sampleWith(t, map[string]any{"aggregatedPublishLatencyQuantiles": json.RawMessage(`{"NaN": 4}`)}),
			"aggregatedPublishLatencyQuantiles.NaN", "not a percentile"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			p, err := Parse(c.data)
			var fe *FieldError
			if !errors.As(err, &fe) {
				t.Fatalf("Parse = %+v, %v; want a *FieldError", p, err)
			}
			if fe.Field != c.field || !strings.Contains(fe.Msg, c.msgSubstr) {
				t.Errorf("error %q (field %q); want field %q and %q", err, fe.Field, c.field, c.msgSubstr)
			}
		})
	}
}

// TestParseTooLarge: a file over MaxBytes is refused before it is read,
// with ErrTooLarge (the API's 413).
func TestParseTooLarge(t *testing.T) {
	data := append(readSample(t), bytes.Repeat([]byte(" "), MaxBytes)...)
	if _, err := Parse(data); !errors.Is(err, ErrTooLarge) {
		t.Fatalf("Parse of %d bytes: %v, want ErrTooLarge", len(data), err)
	}
}

// TestParseAccepts: what OMB's versions and forks write is read: fields
// left out or null (older OMB has no publish delay or error rate), empty
// lists of a figure not measured, fields kbench does not know (named,
// not refused), doubles of whole values where OMB writes longs.
func TestParseAccepts(t *testing.T) {
	old := sampleWith(t, map[string]any{
		"publishErrorRate": nil, "publishDelayLatencyAvg": nil, "publishDelayLatency50pct": nil, "publishDelayLatency75pct": nil,
		"publishDelayLatency95pct": nil, "publishDelayLatency99pct": nil, "publishDelayLatency999pct": nil,
		"publishDelayLatency9999pct": nil, "publishDelayLatencyMax": nil, "aggregatedPublishDelayLatencyQuantiles": json.RawMessage(`null`),
		"aggregatedPublishDelayLatencyAvg": nil, "aggregatedPublishDelayLatency50pct": nil, "aggregatedPublishDelayLatency75pct": nil,
		"aggregatedPublishDelayLatency95pct": nil, "aggregatedPublishDelayLatency99pct": nil, "aggregatedPublishDelayLatency999pct": nil,
		"aggregatedPublishDelayLatency9999pct": nil, "aggregatedPublishDelayLatencyMax": nil,
		"endToEndLatency9999pct": []float64{}, "aggregatedEndToEndLatency75pct": nil,
		"backlog":   json.RawMessage(`[25.0, 12.0, 17.0, 10.0, 19.0, 10.0]`),
		"beginTime": "2024-05-01T10:00:00Z", "version": map[string]string{"git": "abc"},
	})
	p, err := Parse(old)
	if err != nil {
		t.Fatal(err)
	}
	if p.Has("publishErrorRate") || p.Has("aggregatedPublishDelayLatencyQuantiles") || !p.Has("endToEndLatency9999pct") || p.Windows != 6 {
		t.Errorf("present: %v, windows %d", p.Present, p.Windows)
	}
	if strings.Join(p.Unknown, ",") != "beginTime,version" {
		t.Errorf("unknown %v, want beginTime, version", p.Unknown)
	}
	if p.Result.Backlog[0] != 25 {
		t.Errorf("backlog %v", p.Result.Backlog)
	}
	run := p.Run("old.json")
	if _, ok := metric(run, "publish-delay-p99"); ok {
		t.Error("a result without publish delay has publish-delay-p99")
	}
	// e2e's p75 is read off its quantile map (first entry at or above
	// 75%: 5.0), and said so.
	if m, ok := metric(run, "e2e-latency-p75"); !ok || m.Value != 5 || !strings.Contains(m.Help, "read off") {
		t.Errorf("e2e-latency-p75 = %+v, %v; want 5 read off the map", m, ok)
	}
	if !hasNote(run, "e2e-latency-p75 is read off aggregatedEndToEndLatencyQuantiles") || !hasNote(run, "ignored: beginTime, version") {
		t.Errorf("notes: %q", run.Measurement.Notes)
	}
}

func metric(r Run, name string) (rundoc.Metric, bool) {
	for _, m := range r.Metrics {
		if m.Name == name {
			return m, true
		}
	}
	return rundoc.Metric{}, false
}

func hasNote(r Run, substr string) bool {
	for _, n := range r.Measurement.Notes {
		if strings.Contains(n, substr) {
			return true
		}
	}
	return false
}

// TestRunMapping: the sample becomes an imported e2e run of OMB with
// kbench's names and units: aggregated latencies as metrics (the publish
// delay's µs in ms), the rates' means, a series point per window, every
// list as a window series, the maps as curves, and the workload in the
// params.
func TestRunMapping(t *testing.T) {
	p, err := Parse(readSample(t))
	if err != nil {
		t.Fatal(err)
	}
	run := p.Run("r.json")
	if run.Label != "Kafka" || run.Workload != rundoc.E2E || run.Environment.Tool != rundoc.ToolOMB || run.Measurement.Tool != rundoc.ToolOMB ||
		run.Environment.Source != rundoc.SourceImported || run.Measurement.WindowSeconds != 60 {
		t.Errorf("run: %+v %+v", run.Environment, run.Measurement)
	}
	want := map[string]float64{
		"record-send-rate":    (49987.3 + 50003.9 + 49998.2 + 50001.6 + 49995.0 + 50006.1) / 6,
		"consume-rate":        (49984.8 + 50005.2 + 49997.7 + 50002.3 + 49994.1 + 50007.0) / 6,
		"publish-latency-p99": 5.297, "publish-latency-p75": 3.065, "publish-latency-max": 44.351,
		"publish-delay-avg": 0.00374, "publish-delay-p99": 0.009, "publish-delay-p9999": 0.236, "publish-delay-max": 1.873,
		"e2e-latency-p50": 4, "e2e-latency-p9999": 24, "e2e-latency-avg": 3.999,
	}
	for name, v := range want {
		m, ok := metric(run, name)
		if !ok || math.Abs(m.Value-v) > 1e-9*math.Max(1, v) || m.Unit != map[bool]string{true: "records/s", false: "ms"}[strings.HasSuffix(name, "rate")] {
			t.Errorf("%s = %+v, %v; want %v", name, m, ok, v)
		}
	}
	if len(run.Metrics) != 2+3*8 {
		t.Errorf("%d metrics, want 26", len(run.Metrics))
	}
	if len(run.Series) != 6 || run.Series[0].T != 10 || run.Series[5].T != 60 || run.Series[1].RecordsPerSec != 50005.2 ||
		run.Series[1].Records != 500052 || run.Series[1].Bytes != 500052*1024 || run.Series[0].LatencyP99Ms != 9 || run.Series[0].LatencyMaxMs != 52 {
		t.Errorf("series: %+v", run.Series)
	}
	names := map[string]rundoc.WindowSeries{}
	for _, w := range run.Measurement.Windows {
		names[w.Name] = w
	}
	if len(names) != 4+3*8 || names["backlog"].Values[0] != 25 || names["publish-error-rate"].Unit != "errors/s" ||
		names["publish-delay-max"].Values[0] != 1.873 || names["publish-latency-p99"].StepS != 10 {
		t.Errorf("windows: %d %+v", len(names), names["publish-delay-max"])
	}
	if len(run.Measurement.Curves) != 3 || run.Measurement.Curves[1].Kind != rundoc.HistPublishDelay || run.Measurement.Curves[1].Points[18].Value != 1.873 {
		t.Errorf("curves: %+v", run.Measurement.Curves)
	}
	if run.Spec.Params[ParamWorkload] != "1-topic-16-partitions-1kb" || run.Spec.Params["record-size"] != int64(1024) || run.Spec.Params["partitions"] != int64(16) {
		t.Errorf("params: %v", run.Spec.Params)
	}
	if !hasNote(run, "whole milliseconds") || !hasNote(run, "Java client") {
		t.Errorf("notes say nothing of OMB's client and e2e precision: %q", run.Measurement.Notes)
	}
	golden(t, "testdata/kafka-1-topic-16-partitions-1kb.run.golden.json", run)
}

// golden compares v's indented JSON with the file, or writes it with
// -update.
func golden(t *testing.T, file string, v any) {
	t.Helper()
	got, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		t.Fatal(err)
	}
	got = append(got, '\n')
	if *update {
		if err := os.WriteFile(file, got, 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	want, err := os.ReadFile(file)
	if err != nil {
		t.Fatalf("%v (go test -run %s -update writes it)", err, t.Name())
	}
	if !bytes.Equal(got, want) {
		diff := filepath.Join(t.TempDir(), filepath.Base(file))
		os.WriteFile(diff, got, 0o644)
		t.Errorf("%s differs from what the code gives (written to %s; go test -update rewrites it)", file, diff)
	}
}

// TestQuantilesJSON: a quantile map encodes as OMB writes one: keys in
// percentile order, as Java writes doubles; an empty map as {}.
func TestQuantilesJSON(t *testing.T) {
	qs := Quantiles{{Percentile: 0, Value: 1}, {Percentile: 50, Value: 2.5}, {Percentile: 99.90234375, Value: 9}, {Percentile: 100, Value: 12}}
	got, err := json.Marshal(qs)
	if err != nil {
		t.Fatal(err)
	}
	if string(got) != `{"0.0":1,"50.0":2.5,"99.90234375":9,"100.0":12}` {
		t.Errorf("got %s", got)
	}
	var back Quantiles
	if err := json.Unmarshal(got, &back); err != nil || len(back) != 4 || back[2] != qs[2] {
		t.Errorf("back: %v, %v", back, err)
	}
	if empty, _ := json.Marshal(Quantiles(nil)); string(empty) != "{}" {
		t.Errorf("empty map: %s", empty)
	}
}

// FuzzParseOMB: Parse never panics on any input up to a size cap; what
// it accepts maps to a run without non-finite figures, and encodes
// again to a document it reads back the same.
func FuzzParseOMB(f *testing.F) {
	f.Add(readSample(f))
	f.Add([]byte(`{"workload":"w","driver":"d","publishRate":[1,2],"consumeRate":[1,2],"backlog":[0,1]}`))
	f.Add([]byte(`{"workload":"w","driver":"d","endToEndLatency99pct":[3],"aggregatedEndToEndLatencyQuantiles":{"0.0":1,"100":3}}`))
	f.Add([]byte(`{"workload":"w","driver":"d","publishRate":[1e308],"aggregatedPublishLatencyQuantiles":{"99.9":1e-300}}`))
	f.Add([]byte(`{"a":{"b":[{"c":null}]},"workload":"","driver":"","topics":0}`))
	f.Fuzz(func(t *testing.T, data []byte) {
		if len(data) > 1<<16 {
			t.Skip("over the fuzz size cap")
		}
		p, err := Parse(data)
		if err != nil {
			var fe *FieldError
			if !errors.As(err, &fe) {
				t.Fatalf("an error that is no *FieldError: %v", err)
			}
			return
		}
		if p.Windows < 1 {
			t.Fatalf("accepted with %d windows", p.Windows)
		}
		run := p.Run("fuzz.json")
		for _, m := range run.Metrics {
			if math.IsNaN(m.Value) {
				t.Fatalf("metric %s is NaN", m.Name)
			}
		}
		r := p.Result
		fillEmpty(&r)
		again, err := json.Marshal(&r)
		if err != nil {
			// Only a value out of JSON's range (a mean that overflowed
			// is not stored here) could fail; none is accepted.
			t.Fatalf("encode: %v", err)
		}
		q, err := Parse(again)
		if err != nil {
			t.Fatalf("its own encoding is refused: %v\n%s", err, again)
		}
		fillEmpty(&q.Result)
		a, _ := json.Marshal(&q.Result)
		if !bytes.Equal(a, again) {
			t.Fatalf("read back differently:\n%s\n%s", again, a)
		}
	})
}

// TestDetect: an OMB result is told from the other files kbench import
// takes: a Kafka tool's output, a kbench result.json, other JSON.
func TestDetect(t *testing.T) {
	for _, c := range []struct {
		data string
		want bool
	}{
		{string(readSample(t)), true},
		{`{"workload":"w","driver":"d","endToEndLatencyAvg":[]}`, true},
		{`{"workload":"w","driver":"d","publishRate":"broken"}`, true},
		{`{"schema":1,"workload":"producer","complete":true,"metrics":[]}`, false},
		{`{"workload":"w","publishRate":[1]}`, false},
		{"1000 records sent, 999.0 records/sec (0.95 MB/sec), 2.10 ms avg latency, 9.00 ms max latency.\n", false},
		{`[{"workload":"w","driver":"d","publishRate":[1]}]`, false},
		{`{"workload":"w","driver":"d","publishRate":[1]`, false},
		{"", false},
	} {
		if got := Detect([]byte(c.data)); got != c.want {
			t.Errorf("Detect(%.60q) = %v, want %v", c.data, got, c.want)
		}
	}
}
