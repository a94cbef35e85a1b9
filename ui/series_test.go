package ui

import (
	"strings"
	"testing"
	"time"

	"github.com/kbench/kbench/internal/testutil/golden"
	"github.com/kbench/kbench/templates"
)

func TestSeriesName(t *testing.T) {
	for _, tt := range []struct {
		key, label, workload, spec, want string
	}{
		{"imported:producer:perf@trunk", "perf", "producer", "", "perf (producer) on trunk"},
		{"047a5cd56ea7ff5f@main", "", "producer",
			`{"workload":"producer","params":{"topic":"t","record-size":512,"num-records":100000,"throughput":-1,"bootstrap-server":"k:9092","props":{"acks":"all","bootstrap.servers":"k:9092"},"profile":["cpu"]}}`,
			"producer acks=all num-records=100000 record-size=512 throughput=-1 on main"},
		{"047a5cd56ea7ff5f", "", "consumer", `{"workload":"consumer","params":{"group":"g","messages":1000,"a":1,"b":2,"c":3,"d":4,"e":5}}`,
			"consumer a=1 b=2 c=3 d=4 e=5 messages=1000"},
		{"abc", "", "writepath", `{"workload":"writepath","params":{"a":1,"b":2,"c":3,"d":4,"e":5,"f":6,"g":7}}`, "writepath a=1 b=2 c=3 d=4 e=5 f=6 …"},
		{"fp@feat%40x", "my label", "", "", "my label on feat@x"},
		{"nightly", "", "", "", "nightly"},
	} {
		if got := SeriesName(tt.key, tt.label, tt.workload, tt.spec); got != tt.want {
			t.Errorf("SeriesName(%q, %q, %q, …) = %q, want %q", tt.key, tt.label, tt.workload, got, tt.want)
		}
	}
}

// TestGoldenSeries renders the series index: names and keys, run counts,
// last values, sparklines with change-point ticks, the newest change
// (tentative marked) and the time of the newest run.
func TestGoldenSeries(t *testing.T) {
	rows := []SeriesRow{
		{Key: "imported:producer:perf@trunk", Name: "perf (producer) on trunk", Workload: "producer", Runs: 60, Metric: "record-send-rate",
			Last: "102,935 records/s", Sparkline: Sparkline([]float64{115000, 114000, 116000, 105000, 104000, 106000}, []int{3}, "record-send-rate over the newest 6 runs"),
			Change: "-8.7% at #21", ChangeClass: "delta-worse", ChangeURL: "/compare?at=21&by=change&runs=18,19,20,21,22,23",
			HistoryURL: "/history?metric=record-send-rate&series=imported%3Aproducer%3Aperf%40trunk"},
		{Key: "fp-wp@trunk", Name: "fp-wp (writepath) on trunk", Workload: "writepath", Runs: 4, Metric: "request-latency-p99",
			Last: "186 ms", Sparkline: Sparkline([]float64{10.5, 185.5, 185.5, 186}, []int{1, 3}, "request-latency-p99 over the newest 4 runs"),
			Change: "+0.3% at #4", ChangeClass: "delta-worse", Tentative: true, HistoryURL: "/history?series=fp-wp%40trunk"},
	}
	rows[0].SetLastTime(time.Date(2022, 6, 29, 10, 0, 0, 0, time.UTC))
	rows[1].SetLastTime(time.Date(2026, 11, 1, 13, 0, 0, 0, time.UTC))
	u, err := New(templates.FS, goldenStatic)
	if err != nil {
		t.Fatal(err)
	}
	out := render(t, u, "series", NewSeriesView(rows))
	golden.Check(t, "series.html", out)
	if strings.Contains(out, "style=") || strings.Contains(out, "<script") {
		t.Error("inline style or script")
	}
	if strings.Count(out, `<svg class="sparkline"`) != 2 || strings.Count(out, `class="sparkline-cp"`) != 3 {
		t.Error("want two sparklines with three change-point ticks")
	}
}
