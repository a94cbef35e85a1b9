package ui

import (
	"fmt"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/kbench/kbench/internal/compare"
	"github.com/kbench/kbench/internal/rundoc"
)

var (
	legendGroup = regexp.MustCompile(`<g class="chart-legend"[^>]*>(.*?)</g>`)
	legendText  = regexp.MustCompile(`<text x="([0-9.]+)" y="([0-9.]+)">([^<]*)</text>`)
	seriesLine  = regexp.MustCompile(`<polyline stroke="(#[0-9a-f]+)"[^>]*><title>([^<]*)</title>`)
	axisTop     = regexp.MustCompile(`<g class="chart-axis"[^>]*><line [^>]*/><line x1="[0-9.]+" y1="([0-9.]+)"`)
)

// reportCharts is the throughput chart of a report on runs labelled
// labels, compared by.
func reportCharts(t *testing.T, labels []string, by string) string {
	t.Helper()
	var runs []rundoc.Run
	var ids []uint
	for i, l := range labels {
		id := uint(i + 1)
		rate := 1000 + float64(i)
		runs = append(runs, rundoc.Run{ID: id, Label: l, Workload: "producer", Status: rundoc.StatusSucceeded,
			Metrics: []rundoc.Metric{{Name: "record-send-rate", Value: rate, Unit: "records/s", Better: rundoc.HigherIsBetter}},
			Series:  []rundoc.SeriesPoint{{T: 1, RecordsPerSec: rate}, {T: 2, RecordsPerSec: rate + 5}}})
		ids = append(ids, id)
	}
	tab, err := compare.Build(compare.Columns(runs, by), compare.Options{})
	if err != nil {
		t.Fatal(err)
	}
	rep := &rundoc.Report{Slug: "s", Title: "T", RunIDs: ids, By: by, CreatedAt: time.Date(2026, 1, 2, 3, 4, 5, 0, time.UTC)}
	v := NewReportView(rep, tab, runs, "")
	if len(v.Charts) == 0 {
		t.Fatal("no chart")
	}
	return string(v.Charts[0])
}

type legendEntry struct {
	x, y float64
	name string
}

func legendOf(t *testing.T, svg string) []legendEntry {
	t.Helper()
	g := legendGroup.FindStringSubmatch(svg)
	if g == nil {
		t.Fatalf("no legend in %s", svg)
	}
	var out []legendEntry
	for _, m := range legendText.FindAllStringSubmatch(g[1], -1) {
		x, _ := strconv.ParseFloat(m[1], 64)
		y, _ := strconv.ParseFloat(m[2], 64)
		out = append(out, legendEntry{x, y, m[3]})
	}
	return out
}

// TestReportChartLegendByConfiguration (issue 23, item 16): a report's
// charts colour their lines per configuration, not per run, with one
// legend entry per configuration; and a legend too long for one row
// wraps inside the chart, above the plot, instead of running off it.
func TestReportChartLegendByConfiguration(t *testing.T) {
	t.Run("one colour per configuration", func(t *testing.T) {
		labels := []string{"trunk", "branch", "trunk", "branch", "trunk", "branch"}
		svg := reportCharts(t, labels, compare.ByRun)
		var names []string
		for _, e := range legendOf(t, svg) {
			names = append(names, e.name)
		}
		if strings.Join(names, "|") != "trunk|branch" {
			t.Errorf("legend %q, want one entry per configuration: trunk, branch", names)
		}
		colour := map[string]map[string]bool{}
		for _, m := range seriesLine.FindAllStringSubmatch(svg, -1) {
			label := m[2][strings.LastIndex(m[2], " ")+1:] // "run #3 trunk" → trunk
			if colour[label] == nil {
				colour[label] = map[string]bool{}
			}
			colour[label][m[1]] = true
		}
		if len(colour) != 2 || len(colour["trunk"]) != 1 || len(colour["branch"]) != 1 {
			t.Fatalf("line colours by label %v, want one colour each for trunk and branch", colour)
		}
		for c := range colour["trunk"] {
			if colour["branch"][c] {
				t.Errorf("trunk and branch share colour %s", c)
			}
		}
	})
	t.Run("the legend wraps", func(t *testing.T) {
		var labels []string
		for i := range 8 {
			labels = append(labels, fmt.Sprintf("configuration number %d with a long name", i+1))
		}
		labels[7] = strings.Repeat("a name longer than the whole chart is wide ", 3)
		svg := reportCharts(t, labels, compare.ByLabel)
		entries := legendOf(t, svg)
		if len(entries) != 8 {
			t.Fatalf("%d legend entries, want 8", len(entries))
		}
		rows := map[float64]bool{}
		last := 0.0
		for _, e := range entries {
			rows[e.y] = true
			last = max(last, e.y)
			// Text starts 28 units after its line; 7.5 units a character
			// at font-size 13 is the chart's own estimate.
			if right := e.x + 7.5*float64(len([]rune(e.name))); right > DefaultChartWidth {
				t.Errorf("legend entry %q ends at %.0f, past the chart's width %d", e.name, right, DefaultChartWidth)
			}
		}
		if len(rows) < 2 {
			t.Errorf("legend on %d row, want it wrapped", len(rows))
		}
		m := axisTop.FindStringSubmatch(svg)
		if m == nil {
			t.Fatal("no axis")
		}
		if top, _ := strconv.ParseFloat(m[1], 64); top <= last {
			t.Errorf("plot starts at y=%v, over the legend's last row at y=%v", top, last)
		}
	})
}
