package ui

import (
	"math"
	"strings"
	"testing"
	"time"

	"github.com/kbench/kbench/client/wire"
	"github.com/kbench/kbench/internal/changepoint"
	"github.com/kbench/kbench/internal/regressions"
	"github.com/kbench/kbench/internal/testutil/golden"
	"github.com/kbench/kbench/templates"
)

func sampleRegressions() []regressions.Regression {
	t0 := time.Date(2022, 6, 21, 10, 0, 0, 0, time.UTC)
	return []regressions.Regression{
		{Series: "imported:producer:perf@trunk", Name: "perf (producer) on trunk", Workload: "producer", Metric: "record-send-rate", Unit: "records/s",
			RunID: 60, Index: 20, Time: t0.Add(48 * time.Hour), Before: 115000, After: 105000, ChangePct: -8.6957, PValue: 2e-6,
			CommitBefore: "c19", CommitAfter: "c20", CompareURL: "/compare?at=60&by=change&runs=58%2C59%2C60%2C61",
			HistoryURL: "/history?metric=record-send-rate&series=imported%3Aproducer%3Aperf%40trunk"},
		{Series: "p:abc@main", Workload: "producer", Metric: "record-latency-p99", Unit: "ms",
			RunID: 7, Index: 3, Time: t0, Before: 10, After: 12.5, ChangePct: 25, PValue: math.NaN(),
			CommitBefore: "unknown", CommitAfter: "d4", HistoryURL: "/history?metric=record-latency-p99&series=p%3Aabc%40main"},
	}
}

// TestGoldenRegressions renders the regressions page: the form with the
// threshold and parameters, each row's series linking to its history,
// commit range, run, change, p-value, time and before/after link; and
// the empty list.
func TestGoldenRegressions(t *testing.T) {
	u, err := New(templates.FS, goldenStatic)
	if err != nil {
		t.Fatal(err)
	}
	q := RegressionsQuery{Threshold: 5, Options: changepoint.Options{MaxPValue: 0.01}}
	v := NewRegressionsView(sampleRegressions(), q)
	// The first regression's functions are named, the second's are being
	// named.
	v.Rows[0].Functions = NewFunctionsCell([]wire.MovedFunction{{Name: "send.encode", Delta: 612, DeltaPct: 30.7, Base: 1990, Target: 2602, QValue: 1e-20},
		{Name: "crc32.Update", Delta: -80, DeltaPct: -6.2, Base: 1290, Target: 1210, QValue: 0.01}},
		&wire.FunctionNaming{Status: wire.FunctionsNamed, Unit: "nanoseconds/record", RunsBase: []uint{58, 59}, RunsTarget: []uint{60, 61},
			DiffURL: "/compare/profiles?base_runs=58,59&target_runs=60,61&kind=cpu&role=client"})
	v.Rows[1].Functions = NewFunctionsCell(nil, &wire.FunctionNaming{Status: wire.FunctionsComputing})
	out := render(t, u, "regressions", v)
	golden.Check(t, "regressions.html", out)
	for _, want := range []string{
		`<a href="/history?metric=record-send-rate&amp;series=imported%3Aproducer%3Aperf%40trunk"><span class="series-name">perf (producer) on trunk</span></a><br><code class="series">imported:producer:perf@trunk</code>`,
		`<code>c19..c20</code>`, `-8.7%`, `&#43;25.0%`, `<a class="before-after" href="/compare?at=60&amp;by=change&amp;runs=58%2C59%2C60%2C61">`,
		`name="threshold" value="5"`, `name="max_pvalue" value="0.01"`, `name="window" value="50"`,
		`href="/api/regressions?max_pvalue=0.01&amp;threshold=5"`, `<a href="/regressions" aria-current="page">Regressions</a>`,
		`<code class="moved-function" title="1.99 µs/record → 2.60 µs/record, q = 1.0e-20, 2 runs against 2">send.encode</code> <span class="num">&#43;30.7% (&#43;612 ns/record)</span>`,
		`<a class="moved-functions-diff" href="/compare/profiles?base_runs=58,59&amp;target_runs=60,61&amp;kind=cpu&amp;role=client">differential flame graph</a>`,
		`<span class="moved-functions-computing">computing…</span>`,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("page lacks %s", want)
		}
	}
	empty := render(t, u, "regressions", NewRegressionsView(nil, RegressionsQuery{Threshold: 2.5}))
	if !strings.Contains(empty, "No regression of at least 2.5% with these parameters.") {
		t.Errorf("empty page:\n%s", empty)
	}
}

// TestRegressionBadges: a run's badges name the metric and change, link
// to the before/after comparison (the history when there is none), and
// runs without a regression get none.
func TestRegressionBadges(t *testing.T) {
	regs := sampleRegressions()
	v := NewRunsView(nil, 0, RunsQuery{}, nil)
	v.Rows = []RunRow{{ID: 60}, {ID: 7}, {ID: 8}}
	v.SetRegressions(map[uint][]regressions.Regression{60: regs[:1], 7: regs[1:]})
	if b := v.Rows[0].Regressions; len(b) != 1 || b[0].Text != "record-send-rate -8.7%" || b[0].URL != regs[0].CompareURL ||
		!strings.Contains(b[0].Title, "115,000 records/s → 105,000 records/s, commits c19..c20") {
		t.Errorf("run 60 badges %+v", b)
	}
	if b := v.Rows[1].Regressions; len(b) != 1 || b[0].URL != regs[1].HistoryURL {
		t.Errorf("run 7 badges %+v", b)
	}
	if b := v.Rows[2].Regressions; len(b) != 0 {
		t.Errorf("run 8 badges %+v", b)
	}
}
