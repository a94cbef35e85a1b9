package ui

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kbench/kbench/internal/changepoint"
	"github.com/kbench/kbench/internal/history"
	"github.com/kbench/kbench/internal/rundoc"
	"github.com/kbench/kbench/internal/testutil/golden"
	"github.com/kbench/kbench/templates"
)

// historyRuns is the KAFKA-14020 shape, small: 8 runs near 115,000
// records/s, then 8 near 105,000, commits c0…c15, and kafka-go upgraded
// at the 12th run.
func historyRuns() []rundoc.Run {
	noise := []float64{0.4, -1.1, 0.9, -0.3, 1.5, -0.8, 0.1, -1.4}
	t0 := time.Date(2022, 6, 21, 10, 0, 0, 0, time.UTC)
	var runs []rundoc.Run
	for i := 0; i < 16; i++ {
		base := 115000.0
		if i >= 8 {
			base = 105000
		}
		env := &rundoc.Environment{KafkaGoVersion: "v0.4.47", GoVersion: "go1.25.1"}
		if i >= 12 {
			env.KafkaGoVersion = "v0.4.48"
		}
		runs = append(runs, rundoc.Run{ID: uint(40 + i), Status: rundoc.StatusSucceeded, Time: t0.Add(time.Duration(i) * 24 * time.Hour),
			Meta: map[string]string{"commit": "c" + strconv.Itoa(i), "branch": "trunk"}, Environment: env,
			Metrics: []rundoc.Metric{{Name: "record-send-rate", Value: base * (1 + noise[i%8]/100), Unit: "records/s", Better: rundoc.HigherIsBetter}}})
	}
	return runs
}

// TestGoldenHistory renders the history page: the chart's linked points,
// the step of segment medians, the change-point mark linking to the
// before/after comparison, the environment mark, the table and the form
// with the parameters in use.
func TestGoldenHistory(t *testing.T) {
	h := history.Build(historyRuns(), "record-send-rate", changepoint.Options{})
	if len(h.ChangePoints) != 1 || h.ChangePoints[0].Index != 8 {
		t.Fatalf("change points %+v, want one at 8", h.ChangePoints)
	}
	metrics := []rundoc.Metric{{Name: "mb-per-sec", Unit: "MB/s"}, {Name: "record-send-rate", Unit: "records/s"}}
	v := NewHistoryView(h, "imported:producer:perf@trunk", metrics, HistoryQuery{Run: 55})
	u, err := New(templates.FS, goldenStatic)
	if err != nil {
		t.Fatal(err)
	}
	out := render(t, u, "history", v)
	golden.Check(t, "history.html", out)
	for _, want := range []string{
		`<a class="chart-mark-link" href="/compare?at=48&amp;by=change&amp;runs=40%2C41%2C42%2C43%2C44%2C45%2C46%2C47%2C48%2C49%2C50%2C51%2C52%2C53%2C54%2C55">`,
		`<a href="/runs/40"><circle class="chart-point"`,
		`class="chart-mark cp-mark cp-worse"`,
		`class="chart-mark env-mark"`,
		`<code>c7..c8</code>`,
		`kafka-go v0.4.47 → v0.4.48`,
		`name="max_pvalue" value="0.001"`,
		`name="window" value="50"`,
		`<option value="record-send-rate" selected>`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("page lacks %s", want)
		}
	}
	if strings.Contains(out, "style=") || strings.Contains(out, "<script>") {
		t.Error("inline style or script")
	}
}

func TestHistoryQueryValues(t *testing.T) {
	for _, tt := range []struct {
		q    HistoryQuery
		want string
	}{
		{HistoryQuery{Run: 7}, "/history?run=7"},
		{HistoryQuery{Series: "abc@trunk", Metric: "mb-per-sec", Options: changepoint.Options{Window: 30, MaxPValue: 1e-12, MinMagnitude: 0.05}},
			"/history?max_pvalue=1e-12&metric=mb-per-sec&min_magnitude=0.05&series=abc%40trunk&window=30"},
	} {
		if got := HistoryURL(tt.q); got != tt.want {
			t.Errorf("HistoryURL(%+v) = %q, want %q", tt.q, got, tt.want)
		}
	}
}
