package compare

import (
	"bytes"
	"encoding/csv"
	"encoding/json"
	"fmt"
	"strings"
	"testing"

	"github.com/kbench/kbench/internal/rundoc"
	"github.com/kbench/kbench/internal/testutil/golden"
)

// envJSON is a stored environment as result.json writes it, with the
// given config settings (name, value pairs), load average and target.
func envJSON(load1 float64, kind string, settings ...string) string {
	var ss []string
	for i := 0; i+1 < len(settings); i += 2 {
		ss = append(ss, fmt.Sprintf(`{"name":%q,"value":%q}`, settings[i], settings[i+1]))
	}
	target := fmt.Sprintf(`{"kind":%q,"api_versions_from":"127.0.0.1:9092","api_versions":[{"key":0,"name":"Produce","min":0,"max":11},{"key":1,"name":"Fetch","min":4,"max":17},{"key":32,"name":"DescribeConfigs","min":0,"max":4}]}`, kind)
	return fmt.Sprintf(`{"kbench_version":"v0.3.0","kbench_build":"0123456789ab","go_version":"go1.26.8","kafka_go_version":"v0.4.51",`+
		`"os":"linux","arch":"amd64","kernel":"6.8.0","cpu_model":"AMD EPYC 7B13","cores":2,"gomaxprocs":2,"host":"bench-%d",`+
		`"broker":"embedded kfake at 127.0.0.1:%d","load_average":{"load1":%v,"load5":0.5,"load15":0.4},"target":%s,`+
		`"config":{"mode":"raw","settings":[%s]}}`, int(load1*100), 30000+int(load1*100), load1, target, strings.Join(ss, ","))
}

// measurementJSON is a stored measurement: the window, latency samples
// and CPU samples (one every 100 ms).
func measurementJSON(window float64, latencySamples int64, cpuSamples int) string {
	return fmt.Sprintf(`{"warmup_records":0,"measured_records":%d,"window_seconds":%v,"latency_samples":%d,"cpu_samples":%d,"cpu_sample_interval_ms":100}`,
		latencySamples, window, latencySamples, cpuSamples)
}

func specJSON(params string) string { return `{"workload":"producer","params":{` + params + `}}` }

// comparabilityRuns are three producer runs: trunk, a branch that differs
// in compression, record size and load average (and in what must not
// count: host, topic, the embedded broker's port), and an imported run
// that recorded nothing.
func comparabilityRuns() []rundoc.Run {
	trunk := run(1, "trunk", producerMetrics(1, 0)...)
	trunk.SetDocuments(envJSON(0.2, "embedded", "acks", "all", "compression.type", "none", "linger.ms", "5"),
		measurementJSON(12.5, 5_000_000, 125))
	trunk.Spec = specJSON(`"topic":"a","record-size":512,"mode":"raw","profile":["cpu"],"throughput":-1`)

	branch := run(2, "branch", producerMetrics(1.1, 1)...)
	branch.SetDocuments(envJSON(1.5, "embedded", "acks", "all", "compression.type", "snappy", "linger.ms", "5"),
		measurementJSON(11, 5_000_000, 110))
	branch.Spec = specJSON(`"topic":"b","record-size":256,"mode":"raw","profile":["cpu","heap"],"throughput":-1`)

	imported := run(3, "kafka tool", producerMetrics(0.9, 2)...)
	imported.Source = rundoc.SourceImported
	imported.SetDocuments(`{"source":"imported","tool":"kafka-producer-perf-test","broker":"imported: kafka-producer-perf-test does not print its environment"}`,
		`{"source":"imported","tool":"kafka-producer-perf-test","measured_records":5000000,"window_seconds":5.5}`)
	imported.Spec = `{"workload":"imported","tool":"producer"}`
	return []rundoc.Run{trunk, branch, imported}
}

type comparabilityDoc struct {
	Comparability []struct {
		Setting string    `json:"setting"`
		Values  []*string `json:"values"`
	} `json:"comparability"`
	Unknown  []uint `json:"comparability_unknown_runs"`
	Warnings []struct {
		Run     uint     `json:"run"`
		Column  string   `json:"column"`
		Kind    string   `json:"kind"`
		Metrics []string `json:"metrics"`
		Samples int64    `json:"samples"`
		Window  float64  `json:"window_seconds"`
		Text    string   `json:"text"`
	} `json:"warnings"`
}

func exportDoc(t *testing.T, tab *Table) comparabilityDoc {
	t.Helper()
	js, err := JSON(tab, Meta{})
	if err != nil {
		t.Fatal(err)
	}
	var doc comparabilityDoc
	if err := json.Unmarshal(js, &doc); err != nil {
		t.Fatal(err)
	}
	if !bytes.Contains(js, []byte(`"comparability": [`)) || !bytes.Contains(js, []byte(`"warnings": [`)) {
		t.Errorf("JSON lacks the comparability or warnings array:\n%s", js)
	}
	return doc
}

func differences(doc comparabilityDoc) map[string][]string {
	out := map[string][]string{}
	for _, d := range doc.Comparability {
		var vs []string
		for _, v := range d.Values {
			if v == nil {
				vs = append(vs, "<null>")
			} else {
				vs = append(vs, *v)
			}
		}
		out[d.Setting] = vs
	}
	return out
}

// TestComparability: settings that differ between columns are listed, one
// value per column (null where unknown); what legitimately varies is not.
func TestComparability(t *testing.T) {
	tab, err := Build(Columns(comparabilityRuns(), ByRun), Options{})
	if err != nil {
		t.Fatal(err)
	}
	doc := exportDoc(t, tab)
	got := differences(doc)
	want := map[string][]string{
		"client":                        {"kbench", "kbench", "Java kafka-producer-perf-test"},
		"acks":                          {"all", "all", "<null>"},
		"compression.type":              {"none", "snappy", "<null>"},
		"record-size":                   {"512", "256", "<null>"},
		"load average (1 min) at start": {"0.20", "1.50", "<null>"},
	}
	if len(got) != len(want) {
		t.Errorf("comparability = %v, want exactly %v", got, want)
	}
	for k, v := range want {
		if strings.Join(got[k], "|") != strings.Join(v, "|") {
			t.Errorf("%s: values %v, want %v", k, got[k], v)
		}
	}
	if doc.Comparability[0].Setting != "client" || doc.Comparability[1].Setting != "acks" {
		t.Errorf("first differences %q, %q, want the client, then its settings", doc.Comparability[0].Setting, doc.Comparability[1].Setting)
	}
	if fmt.Sprint(doc.Unknown) != "[3]" {
		t.Errorf("comparability_unknown_runs = %v, want [3] (the imported run)", doc.Unknown)
	}
	md := Markdown(tab, Meta{})
	for _, w := range []string{"| compression.type | none | snappy | unknown |", "| record-size | 512 | 256 | unknown |", "#3 kafka tool"} {
		if !strings.Contains(md, w) {
			t.Errorf("Markdown lacks %q:\n%s", w, md)
		}
	}
	if i, j := strings.Index(md, "compression.type"), strings.Index(md, "| Metric |"); i < 0 || i > j {
		t.Error("Markdown shows the differences after the table, want before")
	}
	recs, err := csv.NewReader(bytes.NewReader(CSV(tab))).ReadAll()
	if err != nil {
		t.Fatal(err)
	}
	var rows []string
	for _, r := range recs {
		if r[0] == "comparability" {
			rows = append(rows, r[1]+"/"+r[4]+"="+r[6])
		}
	}
	if w := "compression.type/#1 trunk=none"; !strings.Contains(strings.Join(rows, "\n"), w) {
		t.Errorf("CSV comparability rows %q lack %q", rows, w)
	}

	// Identical configurations: nothing listed. A load average 0.9
	// apart is under the threshold.
	runs := comparabilityRuns()[:2]
	runs[1].SetDocuments(envJSON(1.1, "embedded", "acks", "all", "compression.type", "none", "linger.ms", "5"), runs[1].Documents.Measurement)
	runs[1].Spec = runs[0].Spec
	tab, err = Build(Columns(runs, ByRun), Options{})
	if err != nil {
		t.Fatal(err)
	}
	if doc := exportDoc(t, tab); len(doc.Comparability) != 0 || len(doc.Unknown) != 0 {
		t.Errorf("identical runs: comparability %+v, unknown %v; want none", doc.Comparability, doc.Unknown)
	}
	if md := Markdown(tab, Meta{}); strings.Contains(md, "Not like for like") {
		t.Errorf("identical runs: Markdown speaks of differences:\n%s", md)
	}
}

// TestComparabilityGroups: a column whose own runs disagree reads
// "mixed", and another target is listed; a setting only one column has
// (the release guess of a cluster) is unknown for the other, not a
// difference.
func TestComparabilityGroups(t *testing.T) {
	var runs []rundoc.Run
	for i, c := range []struct {
		label, compression, kind string
	}{{"A", "none", "embedded"}, {"A", "snappy", "embedded"}, {"B", "none", "cluster"}, {"B", "none", "cluster"}} {
		r := run(uint(i+1), c.label, producerMetrics(1, i)...)
		env := envJSON(0.1, c.kind, "compression.type", c.compression)
		if c.kind == "cluster" {
			env = strings.Replace(env, `"broker":"embedded kfake at 127.0.0.1:30010"`, `"broker":"kafka-1:9092,kafka-2:9092"`, 1)
			env = strings.Replace(env, `"api_versions":[`, `"release_guess":"guess: ≥ 3.9 (from API ranges)","api_versions":[`, 1)
		}
		r.SetDocuments(env, "")
		runs = append(runs, r)
	}
	tab, err := Build(Columns(runs, ByLabel), Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := differences(exportDoc(t, tab))
	want := map[string]string{
		"compression.type":       "mixed: none, snappy|none",
		"target":                 "embedded kfake|cluster (kafka-1:9092,kafka-2:9092)",
		"broker release (guess)": "",
	}
	for k, v := range want {
		if strings.Join(got[k], "|") != v {
			t.Errorf("%s: values %q, want %q (all: %v)", k, strings.Join(got[k], "|"), v, got)
		}
	}
}

// TestRunWarnings: short windows and percentiles resting on fewer than 20
// samples are named, per run, in every export.
func TestRunWarnings(t *testing.T) {
	runs := comparabilityRuns()[:2]
	runs[1].SetDocuments(runs[1].Documents.Environment, measurementJSON(0.37, 12, 3))
	runs[1].Metrics = append(runs[1].Metrics, metric("request-latency-p99", 4, "ms", LowerIsBetter))
	tab, err := Build(Columns(runs, ByRun), Options{})
	if err != nil {
		t.Fatal(err)
	}
	doc := exportDoc(t, tab)
	if len(doc.Warnings) != 3 {
		t.Fatalf("warnings = %+v, want 3 (window, latency samples, CPU samples) of run #2", doc.Warnings)
	}
	w := doc.Warnings
	if w[0].Run != 2 || w[0].Kind != "short window" || w[0].Window != 0.37 || !strings.Contains(w[0].Text, "0.370 s") || !strings.Contains(w[0].Text, "5 s") {
		t.Errorf("window warning = %+v", w[0])
	}
	wantLatency := "record-latency-p50 record-latency-p95 record-latency-p99 record-latency-p999 record-latency-intended-p50 record-latency-intended-p95 record-latency-intended-p99 record-latency-intended-p999 request-latency-p99"
	if w[1].Kind != "few samples" || w[1].Samples != 12 || strings.Join(w[1].Metrics, " ") != wantLatency || !strings.Contains(w[1].Text, "12 latency samples") {
		t.Errorf("latency warning = %+v, want metrics %s", w[1], wantLatency)
	}
	if w[2].Kind != "few samples" || w[2].Samples != 3 || strings.Join(w[2].Metrics, " ") != "process-cpu-p99 process-cpu-max" || !strings.Contains(w[2].Text, "3 CPU samples") {
		t.Errorf("CPU warning = %+v", w[2])
	}
	for _, x := range w {
		if x.Column != "#2 branch" {
			t.Errorf("warning column %q, want #2 branch", x.Column)
		}
	}
	md := Markdown(tab, Meta{})
	if !strings.Contains(md, "#2 branch: measured window 0.370 s") {
		t.Errorf("Markdown lacks the window warning:\n%s", md)
	}
	var n int
	recs, _ := csv.NewReader(bytes.NewReader(CSV(tab))).ReadAll()
	for _, r := range recs {
		if r[0] == "warning" {
			n++
		}
	}
	if n != 3 {
		t.Errorf("CSV has %d warning rows, want 3", n)
	}
}

// TestRunWarningsRules checks RunWarnings run by run: thresholds, and
// no warning where the sample count is unknown.
func TestRunWarningsRules(t *testing.T) {
	withCPU := []rundoc.Metric{metric("process-cpu-p99", 150, "%", LowerIsBetter), metric("process-cpu-max", 160, "%", LowerIsBetter),
		metric("record-latency-p99", 3, "ms", LowerIsBetter)}
	tests := []struct {
		name        string
		measurement string
		source      rundoc.Source
		metrics     []rundoc.Metric
		kinds       string
	}{
		{"long and well sampled", measurementJSON(10, 20, 100), "", withCPU, ""},
		{"exactly 5 s, 20 samples", measurementJSON(5, 20, 20), "", withCPU, ""},
		{"just under", measurementJSON(4.99, 19, 19), "", withCPU, "short window,few samples,few samples"},
		{"no CPU sample, no CPU figure", measurementJSON(0.05, 500, 0), "", withCPU[2:], "short window"},
		{"no window (failed before measuring)", measurementJSON(0, 0, 0), "", nil, ""},
		{"imported: window known, samples not", `{"source":"imported","measured_records":1000,"window_seconds":0.5}`, rundoc.SourceImported,
			[]rundoc.Metric{metric("record-latency-p99", 3, "ms", LowerIsBetter)}, "short window"},
		{"nothing stored", "", "", withCPU, ""},
		{"unreadable", "{", "", withCPU, ""},
	}
	for _, tt := range tests {
		r := run(9, "x", tt.metrics...)
		r.SetDocuments("", tt.measurement)
		r.Source = tt.source
		var kinds []string
		for _, w := range RunWarnings(r) {
			kinds = append(kinds, w.Kind)
			if w.Text == "" {
				t.Errorf("%s: warning without text", tt.name)
			}
		}
		if got := strings.Join(kinds, ","); got != tt.kinds {
			t.Errorf("%s: warnings %q, want %q", tt.name, got, tt.kinds)
		}
	}
}

// TestComparabilityGolden fixes the exports of a comparison with
// differences and warnings.
func TestComparabilityGolden(t *testing.T) {
	runs := comparabilityRuns()
	runs[1].SetDocuments(runs[1].Documents.Environment, measurementJSON(0.37, 12, 3))
	tab, err := Build(Columns(runs, ByRun), Options{})
	if err != nil {
		t.Fatal(err)
	}
	meta := Meta{Title: "trunk vs branch", Created: t0}
	golden.Check(t, "comparability.md", Markdown(tab, meta))
	golden.Check(t, "comparability.csv", string(CSV(tab)))
	js, err := JSON(tab, meta)
	if err != nil {
		t.Fatal(err)
	}
	golden.Check(t, "comparability.json", string(js))
}

// TestComparabilitySpec: runs stored before configurations were recorded
// are still compared on their spec; parameters that do not define the
// workload are not; a flag the configuration holds under Kafka's name is
// listed once.
func TestComparabilitySpec(t *testing.T) {
	old := func(id uint, params string) rundoc.Run {
		r := run(id, "old", producerMetrics(1, int(id))...)
		r.Workload = "consumer"
		r.Spec = `{"workload":"consumer","params":{` + params + `}}`
		r.SetDocuments(`{"kbench_version":"devel","go_version":"go1.26.8","broker":"embedded kfake (own process) at 127.0.0.1:4000`+fmt.Sprint(id)+`"}`, "")
		return r
	}
	runs := []rundoc.Run{
		old(1, `"messages":1000,"timeout":10000,"fetch-size":1048576,"topic":"a"`),
		old(2, `"messages":2000,"timeout":20000,"fetch-size":65536,"topic":"b"`),
	}
	tab, err := Build(Columns(runs, ByRun), Options{})
	if err != nil {
		t.Fatal(err)
	}
	doc := exportDoc(t, tab)
	got := differences(doc)
	if len(got) != 2 || strings.Join(got["messages"], "|") != "1000|2000" || strings.Join(got["fetch-size"], "|") != "1048576|65536" {
		t.Errorf("spec-only comparability = %v, want messages and fetch-size (not timeout, topic, the broker's port)", got)
	}
	if fmt.Sprint(doc.Unknown) != "[1 2]" {
		t.Errorf("unknown = %v, want both runs", doc.Unknown)
	}

	for i, v := range []string{"1048576", "65536"} {
		runs[i].SetDocuments(`{"config":{"mode":"group","settings":[{"name":"max.partition.fetch.bytes","value":"`+v+`"}]}}`, runs[i].Documents.Measurement)
	}
	tab, err = Build(Columns(runs, ByRun), Options{})
	if err != nil {
		t.Fatal(err)
	}
	got = differences(exportDoc(t, tab))
	if _, dup := got["fetch-size"]; dup || strings.Join(got["max.partition.fetch.bytes"], "|") != "1048576|65536" {
		t.Errorf("with configurations: %v, want max.partition.fetch.bytes and no fetch-size", got)
	}
}

// TestComparabilityJavaImport: a Java kafka-producer-perf-test import
// compared with a kbench run is not like for like: the client differs,
// and so do the record size and acks its command line gives; an import
// without a command line has them listed as unknown, with a note saying
// so.
func TestComparabilityJavaImport(t *testing.T) {
	kb := run(1, "kbench", producerMetrics(1, 0)...)
	kb.SetDocuments(envJSON(0.2, "cluster", "acks", "all", "compression.type", "none"), measurementJSON(12.5, 500_000, 125))
	kb.Spec = specJSON(`"topic":"a","record-size":512,"num-records":500000,"throughput":-1`)

	java := func(id uint, command string) rundoc.Run {
		r := run(id, fmt.Sprintf("java %d", id), producerMetrics(0.9, int(id))...)
		r.Source = rundoc.SourceImported
		cmd := ""
		if command != "" {
			cmd = `,"command":` + command
		}
		r.SetDocuments(`{"source":"imported","tool":"kafka-producer-perf-test","broker":"imported: kafka-producer-perf-test does not print its environment"}`,
			`{"source":"imported","tool":"kafka-producer-perf-test","measured_records":500000,"window_seconds":5.5`+cmd+`}`)
		r.Spec = `{"workload":"imported","tool":"producer","files":["out.txt"]}`
		return r
	}
	withCommand := java(11, `["bin/kafka-producer-perf-test.sh","--topic","t","--num-records","500000","--record-size","1024","--throughput","-1",`+
		`"--producer-props","bootstrap.servers=b:9092","acks=-1","linger.ms=5","--print-metrics"]`)
	withoutCommand := java(12, "")

	tab, err := Build(Columns([]rundoc.Run{kb, withCommand}, ByRun), Options{})
	if err != nil {
		t.Fatal(err)
	}
	got := differences(exportDoc(t, tab))
	if v := strings.Join(got["client"], "|"); v != "kbench|Java kafka-producer-perf-test" {
		t.Errorf("client %q, want kbench|Java kafka-producer-perf-test (all: %v)", v, got)
	}
	if v := strings.Join(got["record-size"], "|"); v != "512|1024" {
		t.Errorf("record-size %q, want 512|1024", v)
	}
	for _, same := range []string{"num-records", "acks", "throughput", "bootstrap.servers"} {
		if v, ok := got[same]; ok {
			t.Errorf("%s listed as %v: the runs agree (or it is no setting)", same, v)
		}
	}
	if notes := strings.Join(tab.Notes, "\n"); strings.Contains(notes, "unknown (") {
		t.Errorf("a note says a setting is unknown though the command line gives them:\n%s", notes)
	}

	tab, err = Build(Columns([]rundoc.Run{kb, withoutCommand}, ByRun), Options{})
	if err != nil {
		t.Fatal(err)
	}
	got = differences(exportDoc(t, tab))
	for name, want := range map[string]string{"client": "kbench|Java kafka-producer-perf-test", "record-size": "512|<null>",
		"num-records": "500000|<null>", "acks": "all|<null>"} {
		if v := strings.Join(got[name], "|"); v != want {
			t.Errorf("%s %q, want %q", name, v, want)
		}
	}
	want := "Run #12's record size, record count and acks are unknown (imported without a command line)."
	if notes := strings.Join(tab.Notes, "\n"); !strings.Contains(notes, want) {
		t.Errorf("notes lack %q:\n%s", want, notes)
	}
	if md := Markdown(tab, Meta{}); !strings.Contains(md, "| record-size | 512 | unknown |") || !strings.Contains(md, want) {
		t.Errorf("Markdown lacks the unknown record size or its note:\n%s", md)
	}
}
