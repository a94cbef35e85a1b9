package ui

import (
	"fmt"
	"math"
	"regexp"
	"strings"
	"testing"

	"github.com/kbench/kbench/internal/rundoc"
	"github.com/kbench/kbench/internal/testutil/golden"
)

var (
	polylineRe = regexp.MustCompile(`<polyline [^>]*points="([^"]*)"`)
	xTickRe    = regexp.MustCompile(`<text x="[0-9.]+" y="230\.0" text-anchor="middle">([^<]*)</text>`)
)

// TestChartXAxisEndsAtData: an interval chart's time axis ends where the
// data ends (20.3 s here), not at the next multiple of its tick step (25 s),
// so the lines use the whole width.
func TestChartXAxisEndsAtData(t *testing.T) {
	var x, y []float64
	for i := 1; i <= 20; i++ {
		x = append(x, float64(i)+0.015*float64(i)) // ticks come a little late: 1.015 … 20.3
		y = append(y, 1000+float64(i%3)*10)
	}
	svg := string(LineChart(Chart{Title: "Records per second", XLabel: windowAxis, YLabel: "throughput", Unit: "records/s",
		Series: []ChartSeries{{Name: "records/s", X: x, Y: y}}}))
	m := polylineRe.FindStringSubmatch(svg)
	if m == nil {
		t.Fatalf("no polyline in %s", svg)
	}
	pts := strings.Fields(m[1])
	right := itoa(DefaultChartWidth - chartMarginRight)
	if last := pts[len(pts)-1]; !strings.HasPrefix(last, right+".0,") {
		t.Errorf("the last point is drawn at %s, want x=%s (the plot's right edge)", last, right)
	}
	var labels []string
	for _, l := range xTickRe.FindAllStringSubmatch(svg, -1) {
		labels = append(labels, l[1])
	}
	if want := []string{"0", "5", "10", "15", "20"}; strings.Join(labels, " ") != strings.Join(want, " ") {
		t.Errorf("x tick labels %q, want %q", labels, want)
	}
	golden.Check(t, "chart_interval.svg", svg+"\n")
}

// TestDataAxis: the time axis runs from zero (or below) to the data's
// end exactly, with nice ticks inside.
func TestDataAxis(t *testing.T) {
	for _, c := range []struct {
		lo, hi float64
		want   []string
	}{
		{1.015, 20.3, []string{"0", "5", "10", "15", "20"}},
		{0.25, 1.5, []string{"0", "0.5", "1.0", "1.5"}},
		{5, 20, []string{"0", "5", "10", "15", "20"}},
		{0.25, 0.25, []string{"0", "0.05", "0.10", "0.15", "0.20", "0.25"}},
		{0, 0, []string{"0", "0.2", "0.4", "0.6", "0.8", "1.0"}},
		{60, 7201, []string{"0", "2,000", "4,000", "6,000"}},
		{-3, 7, []string{"-2", "0", "2", "4", "6"}},
	} {
		a := dataAxis(c.lo, c.hi)
		if !equalStrings(a.labels, c.want) {
			t.Errorf("dataAxis(%v, %v) labels = %q, want %q", c.lo, c.hi, a.labels, c.want)
		}
		if a.lo != math.Min(c.lo, 0) || (c.hi > 0 && a.hi != c.hi) {
			t.Errorf("dataAxis(%v, %v) = [%v, %v], want [%v, %v]", c.lo, c.hi, a.lo, a.hi, math.Min(c.lo, 0), c.hi)
		}
		for _, v := range a.ticks {
			if v < a.lo || v > a.hi {
				t.Errorf("dataAxis(%v, %v): tick %v outside [%v, %v]", c.lo, c.hi, v, a.lo, a.hi)
			}
		}
	}
}

// TestLongSeriesChartsBounded: a 30 min run's 7,200 points are drawn as at
// most maxChartPoints merged intervals per line, which keep a one-interval
// latency spike and every record, and end where the data ends.
func TestLongSeriesChartsBounded(t *testing.T) {
	var stored []rundoc.SeriesPoint
	var records int64
	for i := 1; i <= rundoc.MaxSeriesPoints; i++ {
		p := rundoc.SeriesPoint{T: float64(i) / 4, Records: 250, Bytes: 25000, RecordsPerSec: 1000,
			MBPerSec: 25000 * 4 / float64(1<<20), LatencyAvgMs: 2, LatencyMaxMs: 4}
		if i == 3001 {
			p.LatencyMaxMs = 950
		}
		records += p.Records
		stored = append(stored, p)
	}
	drawn := chartSeries(stored)
	if len(drawn) > maxChartPoints || len(drawn) < maxChartPoints/2 {
		t.Fatalf("%d points drawn of %d, want at most %d (and not far fewer)", len(drawn), len(stored), maxChartPoints)
	}
	var sum int64
	peak := 0.0
	for _, p := range drawn {
		sum += p.Records
		peak = max(peak, p.LatencyMaxMs)
		if math.Abs(p.RecordsPerSec-1000) > 1e-6 {
			t.Fatalf("merged point %+v: rate %v, want 1000 records/s", p, p.RecordsPerSec)
		}
	}
	if sum != records || peak != 950 || drawn[len(drawn)-1].T != stored[len(stored)-1].T {
		t.Errorf("drawn points hold %d records (want %d), peak max latency %v (want 950), end at %v (want %v)",
			sum, records, peak, drawn[len(drawn)-1].T, stored[len(stored)-1].T)
	}
	for _, c := range seriesCharts(drawn) {
		for _, m := range polylineRe.FindAllStringSubmatch(string(c), -1) {
			if n := len(strings.Fields(m[1])); n > maxChartPoints {
				t.Errorf("a line of %d points, want at most %d", n, maxChartPoints)
			}
		}
	}
	if got := chartSeries(stored[:10]); len(got) != 10 {
		t.Errorf("a short series is drawn with %d points, want all 10", len(got))
	}
}

// TestLogAxis: a log axis runs between powers of ten around the data, with
// 1-2-5 ticks over at most two decades and decades alone beyond.
func TestLogAxis(t *testing.T) {
	for _, c := range []struct {
		lo, hi         float64
		wantLo, wantHi float64
		want           []string
	}{
		{3, 70, 1, 100, []string{"1", "2", "5", "10", "20", "50", "100"}},
		{0.4, 0.9, 0.1, 1, []string{"0.1", "0.2", "0.5", "1"}},
		{10, 10, 10, 100, []string{"10", "20", "50", "100"}},
		{0.05, 420, 0.01, 1000, []string{"0.01", "0.1", "1", "10", "100", "1,000"}},
		{2, 35000, 1, 100000, []string{"1", "10", "100", "1,000", "10k", "100k"}},
	} {
		a := logAxis(c.lo, c.hi)
		if !equalStrings(a.labels, c.want) {
			t.Errorf("logAxis(%v, %v) labels = %q, want %q", c.lo, c.hi, a.labels, c.want)
		}
		if a.lo != c.wantLo || a.hi != c.wantHi {
			t.Errorf("logAxis(%v, %v) = [%v, %v], want [%v, %v]", c.lo, c.hi, a.lo, a.hi, c.wantLo, c.wantHi)
		}
		for _, v := range a.ticks {
			if v < a.lo*(1-1e-9) || v > a.hi*(1+1e-9) {
				t.Errorf("logAxis(%v, %v): tick %v outside [%v, %v]", c.lo, c.hi, v, a.lo, a.hi)
			}
		}
	}
}

// TestLogChart: on a log axis equal ratios are equal distances (1 → 10
// and 10 → 100 ms are drawn the same height apart), points that are not
// positive are skipped rather than drawn at minus infinity, and linked
// points keep their links.
func TestLogChart(t *testing.T) {
	c := Chart{Title: "Latency vs throughput", XLabel: "throughput (records/s)", YLabel: "latency", Unit: "ms", LogY: true,
		Series: []ChartSeries{
			{Name: "a p99", X: []float64{1000, 2000, 3000, 4000}, Y: []float64{1, 10, 0, 100},
				Links: []string{"/runs/1", "/runs/2", "/runs/3", "/runs/4"}, Tips: []string{"run 1", "run 2", "run 3", "run 4"}},
			{Name: "b p99", X: []float64{1500, 2500}, Y: []float64{2, 50}},
		}}
	svg := string(LineChart(c))
	m := polylineRe.FindStringSubmatch(svg)
	if m == nil {
		t.Fatalf("no polyline in %s", svg)
	}
	pts := strings.Fields(m[1])
	if len(pts) != 3 {
		t.Fatalf("points %q, want 3 (the zero skipped)", pts)
	}
	var ys []float64
	for _, p := range pts {
		var x, y float64
		if _, err := fmtSscanf(p, &x, &y); err != nil {
			t.Fatal(err)
		}
		ys = append(ys, y)
	}
	if d1, d2 := ys[0]-ys[1], ys[1]-ys[2]; math.Abs(d1-d2) > 0.2 || d1 <= 0 {
		t.Errorf("1→10 drawn %.1f high, 10→100 %.1f: want equal and positive", d1, d2)
	}
	if strings.Contains(svg, `href="/runs/3"`) {
		t.Error("the point at 0 ms is linked: it cannot be drawn on a log axis")
	}
	for _, want := range []string{`href="/runs/1"`, `href="/runs/4"`} {
		if !strings.Contains(svg, want) {
			t.Errorf("no %s in the chart", want)
		}
	}
	golden.Check(t, "chart_log.svg", svg+"\n")
}

func fmtSscanf(p string, x, y *float64) (int, error) { return fmt.Sscanf(p, "%g,%g", x, y) }
