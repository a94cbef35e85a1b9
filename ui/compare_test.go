package ui

import (
	"strings"
	"testing"
	"time"

	"github.com/kbench/kbench/compare"
	"github.com/kbench/kbench/store"
	"github.com/kbench/kbench/templates"
)

func compareRuns() []store.Run {
	mk := func(id uint, label string, rate, p99 float64, prof bool) store.Run {
		r := store.Run{ID: id, Label: label, Status: store.StatusSucceeded, Metrics: []store.Metric{
			{Name: "records-per-sec", Value: rate, Unit: "records/s", Better: "higher"},
			{Name: "latency-p99", Value: p99, Unit: "ms", Better: "lower"},
			{Name: "records", Value: 1000, Unit: "records"},
		}, Series: []store.SeriesPoint{{Seq: 1, T: 1, RecordsPerSec: rate, LatencyAvgMs: p99 / 2}, {Seq: 2, T: 2, RecordsPerSec: rate, LatencyAvgMs: p99 / 2}}}
		if prof {
			r.Profiles = []store.Profile{{ID: id * 10, RunID: id, Role: "client", Kind: "cpu"}}
		}
		return r
	}
	return []store.Run{mk(1, "trunk", 1000000, 10, true), mk(2, "branch", 1250000, 12.5, true), mk(3, "", 900000, 10, false)}
}

func TestChangeClass(t *testing.T) {
	for _, c := range []struct {
		cell compare.Cell
		want string
	}{
		{compare.Cell{Test: compare.TestSignificant, Verdict: compare.VerdictBetter}, "delta delta-better"},
		{compare.Cell{Test: compare.TestSignificant, Verdict: compare.VerdictWorse}, "delta delta-worse"},
		{compare.Cell{Test: compare.TestSignificant}, "delta delta-changed"},
		{compare.Cell{Test: compare.TestNotSignificant, Verdict: compare.VerdictSame}, "delta delta-same"},
		{compare.Cell{Test: compare.TestTooFew}, "delta delta-toofew"},
		{compare.Cell{Test: compare.TestSingleRuns, Verdict: compare.VerdictBetter}, "delta delta-better delta-untested"},
		{compare.Cell{Test: compare.TestSingleRuns, Verdict: compare.VerdictWorse}, "delta delta-worse delta-untested"},
		{compare.Cell{Test: compare.TestSingleRuns}, "delta delta-same delta-untested"},
		{compare.Cell{}, ""},
	} {
		if got := changeClass(c.cell); got != c.want {
			t.Errorf("changeClass(%+v) = %q, want %q", c.cell, got, c.want)
		}
	}
}

func TestCompareAndReportViews(t *testing.T) {
	runs := compareRuns()
	tab, err := compare.Build(compare.Columns(runs, compare.ByRun), compare.Options{})
	if err != nil {
		t.Fatal(err)
	}
	q := CompareQuery{Runs: []uint{1, 2, 3}, By: compare.ByRun}
	v := NewCompareView(tab, runs, q, "## md")
	if len(v.Table.Columns) != 3 || !v.Table.Columns[0].Baseline || v.Table.ColSpan != 4 {
		t.Errorf("columns = %+v", v.Table.Columns)
	}
	if len(v.Table.Sections) != 3 || v.Table.Sections[0].Name != compare.SectionThroughput {
		t.Errorf("sections = %+v", v.Table.Sections)
	}
	rate := v.Table.Sections[0].Rows[0]
	if rate.Direction != "↑" || rate.Cells[0].Value != "1,000,000" || rate.Cells[0].Unit != "records/s" || rate.Cells[0].Change != "" ||
		rate.Cells[1].Change != "+25.0% ✓?" || rate.Cells[1].Class != "delta delta-better delta-untested" ||
		rate.Cells[2].Class != "delta delta-worse delta-untested" {
		t.Errorf("records-per-sec row = %+v", rate)
	}
	lat := v.Table.Sections[1].Rows[0]
	if lat.Direction != "↓" || lat.Cells[1].Class != "delta delta-worse delta-untested" || lat.Cells[2].Change != "0.0% =" {
		t.Errorf("latency row = %+v", lat)
	}
	if v.ToggleURL != "/compare?hide_unchanged=1&runs=1%2C2%2C3" || v.ByOptions[1].URL != "/compare?by=label&runs=1%2C2%2C3" || !v.ByOptions[0].Current {
		t.Errorf("toggle %q, by options %+v", v.ToggleURL, v.ByOptions)
	}
	if v.DefaultTitle != "#1 trunk vs #2 branch vs #3" || v.Table.Columns[1].Runs[0].URL != "/runs/2" {
		t.Errorf("title %q, runs %+v", v.DefaultTitle, v.Table.Columns[1].Runs)
	}

	rep := &store.Report{Slug: "abc", Title: "T", Notes: "N", RunIDs: []uint{1, 2, 3}, By: "run", CreatedAt: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	rv := NewReportView(rep, tab, runs, "## T")
	if len(rv.Diffs) != 1 || rv.Diffs[0].FlameGraph.DataURL != "/api/diff?base=10&format=compact&target=20" || rv.Diffs[0].FlameGraph.Mode != "diff" {
		t.Errorf("diffs = %+v (run 3 has no profile)", rv.Diffs)
	}
	if len(rv.Charts) != 2 || !strings.Contains(string(rv.Charts[0]), "#2 branch") {
		t.Errorf("charts: %d", len(rv.Charts))
	}
	if rv.Exports[0].URL != "/r/abc.md" || rv.CompareURL != "/compare?runs=1%2C2%2C3" || rv.Created != "2026-01-02 03:04:05" {
		t.Errorf("report view = %+v", rv)
	}

	u, err := New(templates.FS, goldenStatic)
	if err != nil {
		t.Fatal(err)
	}
	for name, view := range map[string]any{"compare": v, "report": rv} {
		out, err := u.RenderBytes(name, view)
		if err != nil {
			t.Fatal(err)
		}
		if s := string(out); strings.Contains(s, "style=") || strings.Contains(s, "<script>") || !strings.Contains(s, `id="comparison"`) {
			t.Errorf("%s page: inline style/script or no table", name)
		}
	}
	rv.Diffs = nil
	rv.NoDiffs = "none"
	if out, _ := u.RenderBytes("report", rv); strings.Contains(string(out), "flamegraph.js") {
		t.Error("report without diffs loads flamegraph.js")
	}
}

func TestCompareViewWithoutMetrics(t *testing.T) {
	runs := []store.Run{{ID: 1, Status: store.StatusFailed}, {ID: 2, Status: store.StatusQueued}}
	tab, err := compare.Build(compare.Columns(runs, compare.ByRun), compare.Options{})
	if err != nil {
		t.Fatal(err)
	}
	u, err := New(templates.FS, goldenStatic)
	if err != nil {
		t.Fatal(err)
	}
	out, err := u.RenderBytes("compare", NewCompareView(tab, runs, CompareQuery{Runs: []uint{1, 2}}, ""))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(out), `id="no-metrics"`) || strings.Contains(string(out), `id="comparison"`) {
		t.Error("a comparison without metrics does not say so")
	}
}
