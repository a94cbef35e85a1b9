package ui

import (
	"net/url"
	"strings"
	"testing"

	"github.com/kbench/kbench/internal/compare"
	"github.com/kbench/kbench/internal/rundoc"
)

func wpRun(id uint, label string, status rundoc.Status, rps, syscalls float64) rundoc.Run {
	r := rundoc.Run{ID: id, Label: label, Status: status, Workload: "writepath", GroupIndex: 1,
		Profiles: []rundoc.Profile{{ID: id * 10, RunID: id, Role: "client", Kind: "cpu"}}}
	if status == rundoc.StatusSucceeded {
		r.Metrics = []rundoc.Metric{
			{Name: "requests-per-sec", Value: rps, Unit: "requests/s", Better: rundoc.HigherIsBetter},
			{Name: "write-syscalls-per-request", Value: syscalls, Unit: "syscalls", Better: rundoc.LowerIsBetter},
		}
	}
	return r
}

func TestWritepathResultProgress(t *testing.T) {
	runs := []rundoc.Run{wpRun(1, "gather", rundoc.StatusSucceeded, 100000, 1), wpRun(2, "per-buffer", rundoc.StatusRunning, 0, 0)}
	if AllFinal(runs) {
		t.Fatal("a running run is final")
	}
	v := NewWritepathResult("0123456789ab", runs, nil, nil)
	if !v.Refresh || v.Done != 1 || v.Total != 2 || v.HasTable || len(v.Runs) != 2 || v.Runs[1].Status != string(rundoc.StatusRunning) {
		t.Errorf("progress view %+v", v)
	}
	html, err := newTestUI(t).RenderBytes("writepath", v)
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(string(html), `<meta http-equiv="refresh" content="2">`) || !strings.Contains(string(html), "1 of 2 runs finished") {
		t.Error("an unfinished batch's page does not reload itself")
	}
}

func TestWritepathResultRatios(t *testing.T) {
	runs := []rundoc.Run{
		wpRun(1, "gather", rundoc.StatusSucceeded, 100000, 1), wpRun(2, "per-buffer", rundoc.StatusSucceeded, 10000, 18),
		wpRun(3, "gather", rundoc.StatusSucceeded, 120000, 1), wpRun(4, "per-buffer", rundoc.StatusFailed, 0, 0),
	}
	// Columns by label, gather first.
	ordered := []rundoc.Run{runs[0], runs[2], runs[1], runs[3]}
	table, err := compare.Build(compare.Columns(ordered, compare.ByLabel), compare.Options{})
	if err != nil {
		t.Fatal(err)
	}
	v := NewWritepathResult("0123456789ab", ordered, table, map[string]*WritePaths{
		"gather": {Unit: "nanoseconds", Total: 100, Rows: []WritePathRow{{Direction: "write", Path: "gather", Value: 40, Samples: 4}}},
	})
	if v.Refresh || !v.HasTable || len(v.Ratios) != 2 {
		t.Fatalf("view %+v", v)
	}
	g, pb := v.Ratios[0], v.Ratios[1]
	if g.Strategy != "gather" || !g.Baseline || g.RequestsRatio != "×1.00" || g.SyscallsRatio != "×1.00" {
		t.Errorf("gather %+v", g)
	}
	// Medians of succeeded runs: 110000 vs 10000 requests/s, 1 vs 18 syscalls.
	if pb.RequestsRatio != "×0.091" || pb.SyscallsRatio != "×18.0" {
		t.Errorf("per-buffer %+v", pb)
	}
	if len(v.Panels) != 1 || v.Panels[0].Strategy != "gather" || v.Panels[0].ProfileURL != "/profiles/10" {
		t.Errorf("panels %+v", v.Panels)
	}
	if v.Diff == nil || v.Diff.DataURL != "/api/diff?base_runs=1%2C3&format=rows&kind=cpu&normalize=work&role=client&target_runs=2" || v.Diff.Mode != "diff" {
		t.Errorf("inline diff %+v", v.Diff)
	}
	// Every succeeded gather run with a profile (1 and 3) is merged.
	if v.DiffURL != "/compare/profiles?base_runs=1%2C3&kind=cpu&normalize=work&role=client&target_runs=2" {
		t.Errorf("diff url %q", v.DiffURL)
	}
	// No succeeded per-buffer run with a profile: no diff, and why.
	v = NewWritepathResult("0123456789ab", ordered[:2], table, nil)
	if v.DiffURL != "" || v.Diff != nil || v.NoDiff == "" {
		t.Errorf("diff without per-buffer: %q %q", v.DiffURL, v.NoDiff)
	}
}

func TestWritepathForm(t *testing.T) {
	v := NewWritepathForm(url.Values{}, nil)
	if !v.Sink || len(v.Fields) != 6 || v.Action != "/writepath" || v.Fields[2].Name != WPFieldDuration || v.Fields[2].Placeholder != FormatNumber(WPDefaultSeconds) {
		t.Errorf("fresh form %+v", v)
	}
	v = NewWritepathForm(url.Values{"requests": {"x"}}, map[string]string{"requests": "bad", "body": "worse"})
	if v.Sink || len(v.Errors) != 2 || v.Errors[0].Anchor != "#f-requests" || v.Errors[1].Field != "body" {
		t.Errorf("form with errors %+v", v.Errors)
	}
}

// TestWritepathPanelCopy: copy joins a request's buffers and writes them
// with one write(2). Its profile shows write(2), the single-buffer call, as
// per-buffer's does; the panel must not call that one write per buffer: it
// says what the row is (one buffer per system call) and how many writes a
// request took, measured.
func TestWritepathPanelCopy(t *testing.T) {
	runs := []rundoc.Run{wpRun(1, "gather", rundoc.StatusSucceeded, 100000, 1), wpRun(2, "per-buffer", rundoc.StatusSucceeded, 10000, 18),
		wpRun(3, "copy", rundoc.StatusSucceeded, 90000, 1)}
	table, err := compare.Build(compare.Columns(runs, compare.ByLabel), compare.Options{})
	if err != nil {
		t.Fatal(err)
	}
	single := func(v float64) *WritePaths {
		return &WritePaths{Unit: "nanoseconds", Total: 100, Rows: []WritePathRow{{Direction: "write", Path: "single", Value: v, Samples: 4}}}
	}
	v := NewWritepathResult("0123456789ab", runs, table, map[string]*WritePaths{"per-buffer": single(80), "copy": single(30)})
	if len(v.Panels) != 2 {
		t.Fatalf("panels %+v", v.Panels)
	}
	byStrategy := map[string]WPPanel{}
	for _, p := range v.Panels {
		byStrategy[p.Strategy] = p
	}
	if got := byStrategy["copy"].WritesPerRequest; got != "1" {
		t.Errorf("copy panel: %q write system calls per request, want 1", got)
	}
	if got := byStrategy["per-buffer"].WritesPerRequest; got != "18" {
		t.Errorf("per-buffer panel: %q write system calls per request, want 18", got)
	}
	html, err := newTestUI(t).RenderBytes("writepath", v)
	if err != nil {
		t.Fatal(err)
	}
	page := string(html)
	section := page[strings.Index(page, `id="wp-panels-heading"`):]
	section = section[:strings.Index(section, "</section>")]
	copyPanel := section[strings.Index(section, `data-strategy="copy"`):]
	copyPanel = copyPanel[:strings.Index(copyPanel, "</div>")]
	// What "single" is must not read as one write per buffer, which is
	// only per-buffer's case.
	for _, wrong := range []string{"one write/read per buffer", "one write/read call per buffer"} {
		if strings.Contains(section, wrong) {
			t.Errorf("the panels define single as %q", wrong)
		}
	}
	if !strings.Contains(copyPanel, "1 write system call per request") {
		t.Errorf("the copy panel reads as one write per buffer:\n%s", section)
	}
	if !strings.Contains(section, "18 write system calls per request") {
		t.Errorf("the per-buffer panel does not say its 18 writes per request:\n%s", section)
	}
}

// TestWritepathResultJava: Java runs' wall profiles give their panels and
// the Java differential flame graph (java-per-buffer against java-gather);
// a batch without Java runs has no Java section.
func TestWritepathResultJava(t *testing.T) {
	java := func(id uint, label string) rundoc.Run {
		r := wpRun(id, label, rundoc.StatusSucceeded, 50000, 1)
		r.Profiles = []rundoc.Profile{{ID: id * 10, RunID: id, Role: "client", Kind: rundoc.KindWall}}
		return r
	}
	runs := []rundoc.Run{wpRun(1, "gather", rundoc.StatusSucceeded, 100000, 1), wpRun(2, "per-buffer", rundoc.StatusSucceeded, 10000, 18),
		java(3, rundoc.StrategyJavaGather), java(4, rundoc.StrategyJavaPerBuffer)}
	if got := WritepathProfile(&runs[2]); got != 30 {
		t.Errorf("WritepathProfile of a Java run = %d, want its wall profile 30", got)
	}
	table, err := compare.Build(compare.Columns(runs, compare.ByLabel), compare.Options{})
	if err != nil {
		t.Fatal(err)
	}
	wp := &WritePaths{Unit: "count", Total: 10, Rows: []WritePathRow{{Direction: "write", Path: "gather", Value: 4, Samples: 4}}}
	v := NewWritepathResult("0123456789ab", runs, table, map[string]*WritePaths{rundoc.StrategyJavaGather: wp})
	if !v.HasJava || v.JavaDiffURL != "/compare/profiles?base_runs=3&kind=wall&normalize=work&role=client&target_runs=4" || v.JavaDiff == nil ||
		v.JavaDiff.DataURL != "/api/diff?base_runs=3&format=rows&kind=wall&normalize=work&role=client&target_runs=4" {
		t.Errorf("Java diff: has %v url %q graph %+v", v.HasJava, v.JavaDiffURL, v.JavaDiff)
	}
	if len(v.Panels) != 1 || v.Panels[0].ProfileURL != "/profiles/30" {
		t.Errorf("panels %+v", v.Panels)
	}
	html, err := newTestUI(t).RenderBytes("writepath", v)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`id="wp-java-diff-link"`, `id="wp-java-diff"`, `id="wp-diff"`, "not CPU time"} {
		if !strings.Contains(string(html), want) {
			t.Errorf("page lacks %s", want)
		}
	}
	v = NewWritepathResult("0123456789ab", runs[:2], table, nil)
	if v.HasJava || v.JavaDiff != nil {
		t.Error("a batch without Java runs has a Java section")
	}
	v = NewWritepathResult("0123456789ab", runs[:3], table, nil)
	if !v.HasJava || v.JavaDiff != nil || v.NoJavaDiff == "" {
		t.Errorf("java-gather alone: diff %+v, why %q", v.JavaDiff, v.NoJavaDiff)
	}
}

// TestWritepathResultCPUColumn: the summary has the client's CPU per
// request of each strategy (process-cpu-seconds / requests-sent of each
// run, the median of the runs) with its unit and its ratio to gather's.
func TestWritepathResultCPUColumn(t *testing.T) {
	withCPU := func(r rundoc.Run, cpuSeconds, requests float64) rundoc.Run {
		r.Metrics = append(r.Metrics,
			rundoc.Metric{Name: "process-cpu-seconds", Value: cpuSeconds, Unit: "s", Better: rundoc.LowerIsBetter},
			rundoc.Metric{Name: "requests-sent", Value: requests, Unit: "requests"})
		return r
	}
	runs := []rundoc.Run{
		withCPU(wpRun(1, "gather", rundoc.StatusSucceeded, 100000, 1), 0.2, 20000),      // 10 µs
		withCPU(wpRun(3, "gather", rundoc.StatusSucceeded, 120000, 1), 0.36, 30000),     // 12 µs
		withCPU(wpRun(2, "per-buffer", rundoc.StatusSucceeded, 10000, 18), 0.55, 20000), // 27.5 µs
		wpRun(4, "copy", rundoc.StatusSucceeded, 90000, 1),                              // no CPU figures
	}
	table, err := compare.Build(compare.Columns(runs, compare.ByLabel), compare.Options{})
	if err != nil {
		t.Fatal(err)
	}
	v := NewWritepathResult("0123456789ab", runs, table, nil)
	got := map[string][2]string{}
	for _, r := range v.Ratios {
		got[r.Strategy] = [2]string{r.CPUPerRequest, r.CPURatio}
	}
	want := map[string][2]string{"gather": {"11", "×1.00"}, "per-buffer": {"27.50", "×2.50"}, "copy": {"—", "—"}}
	for s, w := range want {
		if got[s] != w {
			t.Errorf("%s: CPU per request %q, ratio %q; want %q, %q", s, got[s][0], got[s][1], w[0], w[1])
		}
	}
	html, err := newTestUI(t).RenderBytes("writepath", v)
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{`CPU per request (µs)</th>`, `<td class="num wp-cpu">27.50</td><td class="num wp-ratio">×2.50</td>`} {
		if !strings.Contains(string(html), want) {
			t.Errorf("the summary lacks %q", want)
		}
	}
}
