package ui

import (
	"strings"
	"testing"
	"time"

	"github.com/kbench/kbench/internal/compare"
	"github.com/kbench/kbench/internal/rundoc"
	"github.com/kbench/kbench/templates"
)

func compareRuns() []rundoc.Run {
	mk := func(id uint, label string, rate, p99 float64, prof bool) rundoc.Run {
		r := rundoc.Run{ID: id, Label: label, Workload: "producer", Status: rundoc.StatusSucceeded, Metrics: []rundoc.Metric{
			{Name: "record-send-rate", Value: rate, Unit: "records/s", Better: rundoc.HigherIsBetter},
			{Name: "record-latency-p99", Value: p99, Unit: "ms", Better: rundoc.LowerIsBetter},
			{Name: "records", Value: 1000, Unit: "records"},
		}, Series: []rundoc.SeriesPoint{{T: 1, RecordsPerSec: rate, LatencyAvgMs: p99 / 2}, {T: 2, RecordsPerSec: rate, LatencyAvgMs: p99 / 2}}}
		if prof {
			r.Profiles = []rundoc.Profile{{ID: id * 10, RunID: id, Role: "client", Kind: "cpu"}}
		}
		return r
	}
	return []rundoc.Run{mk(1, "trunk", 1000000, 10, true), mk(2, "branch", 1250000, 12.5, true), mk(3, "", 900000, 10, false)}
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
		{compare.Cell{Test: compare.TestNotSignificant, State: compare.StateBorderline}, "delta delta-borderline"},
		{compare.Cell{Test: compare.TestNotSignificant, State: compare.StateInconclusive}, "delta delta-inconclusive"},
		{compare.Cell{Test: compare.TestNotSignificant, State: compare.StateUnchanged, Verdict: compare.VerdictSame}, "delta delta-same"},
		{compare.Cell{Test: compare.TestDescriptive}, "delta delta-descriptive"},
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
		t.Errorf("record-send-rate row = %+v", rate)
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

	rep := &rundoc.Report{Slug: "abc", Title: "T", Notes: "N", RunIDs: []uint{1, 2, 3}, By: "run", CreatedAt: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	rv := NewReportView(rep, tab, runs, "## T")
	if len(rv.Diffs) != 1 || rv.Diffs[0].FlameGraph.DataURL != "/api/diff?base_runs=1&format=rows&kind=cpu&role=client&target_runs=2" || rv.Diffs[0].FlameGraph.Mode != "diff" {
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
	runs := []rundoc.Run{{ID: 1, Status: rundoc.StatusFailed}, {ID: 2, Status: rundoc.StatusQueued}}
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

// statesPage renders the comparison of 6 trunk runs (rate and latency
// base) against 6 branch runs (rate and latency the given values), with a
// descriptive syscr row.
func statesPage(t *testing.T, rate, lat []float64) string {
	t.Helper()
	base := []float64{100, 101, 102, 103, 104, 105}
	var runs []rundoc.Run
	for i := range 12 {
		side, j := i/6, i%6
		r, l := base[j]*1000, base[j]/10
		if side == 1 {
			r, l = rate[j]*1000, lat[j]/10
		}
		runs = append(runs, rundoc.Run{ID: uint(i + 1), Label: []string{"trunk", "branch"}[side], Workload: "producer", Status: rundoc.StatusSucceeded,
			Metrics: []rundoc.Metric{
				{Name: "record-send-rate", Value: r, Unit: "records/s", Better: rundoc.HigherIsBetter},
				{Name: "record-latency-p99", Value: l, Unit: "ms", Better: rundoc.LowerIsBetter},
				{Name: "syscr", Value: 1000 + float64(j), Unit: "syscalls", Better: rundoc.LowerIsBetter},
			}})
	}
	tab, err := compare.Build(compare.Columns(runs, compare.ByLabel), compare.Options{})
	if err != nil {
		t.Fatal(err)
	}
	u, err := New(templates.FS, goldenStatic)
	if err != nil {
		t.Fatal(err)
	}
	ids := make([]uint, len(runs))
	for i := range ids {
		ids[i] = uint(i + 1)
	}
	out, err := u.RenderBytes("compare", NewCompareView(tab, runs, CompareQuery{Runs: ids, By: compare.ByLabel}, ""))
	if err != nil {
		t.Fatal(err)
	}
	return string(out)
}

// TestCompareStatesRendered renders comparisons whose headline changes
// are significant, borderline and inconclusive, beside a descriptive
// row: the page shows each change's interval and state, a tag on the
// tested rows, and the table's "run more repetitions" suggestion with
// its number in data attributes a button can read.
func TestCompareStatesRendered(t *testing.T) {
	base := []float64{100, 101, 102, 103, 104, 105}
	// Rate: U = 6 of 36, p = 0.065; latency far lower, p = 0.002: the
	// adjusted p of the rate stays 0.065, borderline.
	page := statesPage(t, []float64{102.5, 103.5, 104.5, 106, 107, 108}, []float64{80, 81, 82, 83, 84, 85})
	for _, want := range []string{
		`id="suggest-repetitions"`, `data-more-repetitions="1"`, "Inconclusive: run 1 more repetition per side",
		"record-send-rate in branch: borderline, about 1 more per side",
		`class="delta delta-borderline" data-state="borderline" data-more-repetitions="1">&#43;2.7% borderline</span></td>
      <td class="num hl"><span class="delta delta-borderline">&#43;2.7% [−0.5%, &#43;5.9%] adj. p=0.065</span></td>`,
		`<th scope="col" class="num hl-col"`, "Hodges-Lehmann Δ, 95% CI",
		`class="delta delta-better" data-state="significant">`,
		`class="delta delta-descriptive">0.0%</span>`, // same medians: no mark
		`<tr data-metric="record-send-rate" class="headline">`, `<tr data-metric="syscr" class="descriptive">`,
		`<span class="tag tag-tested"`, "Benjamini-Hochberg",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("compare page lacks %q", want)
		}
	}
	// Wide latencies, no shift: inconclusive, and more than the cap.
	page = statesPage(t, base, []float64{80, 95, 110, 120, 90, 105})
	for _, want := range []string{
		`class="delta delta-inconclusive" data-state="inconclusive" data-more-repetitions="31">`,
		`data-more-repetitions="30"`, "record-latency-p99 in branch: inconclusive, more than 30 more per side",
	} {
		if !strings.Contains(page, want) {
			t.Errorf("compare page lacks %q", want)
		}
	}
}

// TestCompareColumnHeaders (issue 23, items 5 and 9): a column of many
// runs is summarised in its header (count, first and last id, a link to
// the runs list narrowed to them) instead of listing every run, and the
// baseline selector of a comparison by label moves a label's runs
// first, whatever their order.
func TestCompareColumnHeaders(t *testing.T) {
	var runs []rundoc.Run
	var ids []uint
	for i := uint(1); i <= 40; i++ {
		label := "trunk"
		if i%2 == 0 {
			label = "branch"
		}
		runs = append(runs, rundoc.Run{ID: i, Label: label, Workload: "producer", Status: rundoc.StatusSucceeded,
			Metrics: []rundoc.Metric{{Name: "record-send-rate", Value: 1000 + float64(i%7), Unit: "records/s", Better: rundoc.HigherIsBetter}}})
		ids = append(ids, i)
	}
	tab, err := compare.Build(compare.Columns(runs, compare.ByLabel), compare.Options{})
	if err != nil {
		t.Fatal(err)
	}
	v := NewCompareView(tab, runs, CompareQuery{Runs: ids, By: compare.ByLabel}, "")
	trunk := v.Table.Columns[0]
	if trunk.RunsSummary != "20 runs, #1 … #39" || !strings.HasPrefix(trunk.RunsListURL, "/?ids=1%2C3%2C5%2C") {
		t.Errorf("trunk header: summary %q, list %q", trunk.RunsSummary, trunk.RunsListURL)
	}
	if len(v.Baselines) != 2 || !v.Baselines[0].Current || v.Baselines[1].Label != "branch" ||
		!strings.HasPrefix(v.Baselines[1].Runs, "2,4,6,") || !strings.HasSuffix(v.Baselines[1].Runs, ",40,1,3,5,7,9,11,13,15,17,19,21,23,25,27,29,31,33,35,37,39") {
		t.Errorf("baseline choices %+v", v.Baselines)
	}
	u, err := New(templates.FS, goldenStatic)
	if err != nil {
		t.Fatal(err)
	}
	out, err := u.RenderBytes("compare", v)
	if err != nil {
		t.Fatal(err)
	}
	page := string(out)
	head := page[strings.Index(page, "<thead>"):strings.Index(page, "</thead>")]
	if !strings.Contains(head, `<a class="col-runs-list" href="/?ids=1%2c3%2c5`) && !strings.Contains(head, `<a class="col-runs-list" href="/?ids=1%2C3%2C5`) {
		t.Errorf("header lacks the link to the runs list:\n%s", head)
	}
	if n := strings.Count(head, `href="/runs/`); n != 0 {
		t.Errorf("header links %d runs one by one, want a summary", n)
	}
}

// TestEmbeddedNoteRendered (issue 23, item 19): the comparison page of
// runs on the embedded broker, and the page of such a run, say it is one
// in-memory broker where acks and replication cannot show their cost;
// pages of cluster runs do not.
func TestEmbeddedNoteRendered(t *testing.T) {
	u, err := New(templates.FS, goldenStatic)
	if err != nil {
		t.Fatal(err)
	}
	for _, tt := range []struct {
		kind string
		want bool
	}{{rundoc.TargetEmbedded, true}, {rundoc.TargetCluster, false}} {
		runs := compareRuns()
		for i := range runs {
			runs[i].Environment = &rundoc.Environment{Broker: "b", Target: &rundoc.Target{Kind: tt.kind}}
		}
		tab, err := compare.Build(compare.Columns(runs, compare.ByRun), compare.Options{})
		if err != nil {
			t.Fatal(err)
		}
		out, err := u.RenderBytes("compare", NewCompareView(tab, runs, CompareQuery{Runs: []uint{1, 2, 3}, By: compare.ByRun}, ""))
		if err != nil {
			t.Fatal(err)
		}
		page := string(out)
		got := strings.Contains(page, `id="embedded-note"`) && strings.Contains(page, "All runs ran on the embedded broker.") &&
			strings.Contains(page, "acks, replication and durability settings cannot show their cost")
		if got != tt.want || (!tt.want && strings.Contains(page, "embedded-note")) {
			t.Errorf("%s runs: compare page shows the embedded-broker note: %v, want %v", tt.kind, got, tt.want)
		}
	}
}
