package ui

import (
	"regexp"
	"strconv"
	"testing"

	"github.com/kbench/kbench/internal/changepoint"
	"github.com/kbench/kbench/internal/history"
)

// markBoxes reads the label boxes of a rendered chart's marks.
func markBoxes(t *testing.T, svg string) [][4]float64 {
	t.Helper()
	re := regexp.MustCompile(`<rect class="chart-mark-hit" x="([-0-9.]+)" y="([-0-9.]+)" width="([0-9.]+)" height="([0-9.]+)"`)
	var out [][4]float64
	for _, m := range re.FindAllStringSubmatch(svg, -1) {
		var b [4]float64
		for i := range b {
			v, err := strconv.ParseFloat(m[i+1], 64)
			if err != nil {
				t.Fatal(err)
			}
			b[i] = v
		}
		out = append(out, b)
	}
	return out
}

// TestChartMarkLabelsNeverOverlap: change-point labels and Δ env labels
// at the same run, and at neighbouring runs of a long history, are laid
// out in lanes: no two label boxes of the rendered SVG overlap, and every
// label stays inside the picture.
func TestChartMarkLabelsNeverOverlap(t *testing.T) {
	var xs, ys []float64
	for i := range 60 {
		xs = append(xs, float64(i))
		ys = append(ys, 100+float64(i%3))
	}
	marks := []ChartMark{
		{X: 19.5, Label: "−8.7% c19..c20", Class: "cp-mark"},
		{X: 19.5, Label: "Δ env", Class: "env-mark"},
		{X: 20.5, Label: "Δ env", Class: "env-mark"},
		{X: 21.5, Label: "+3.1% c21..c22", Class: "cp-mark"},
		{X: 44.5, Label: "−1.8% c44..c45", Class: "cp-mark"},
		{X: 50.5, Label: "Δ env", Class: "env-mark"},
	}
	svg := string(LineChart(Chart{Title: "t", Width: 960, Height: 360, Series: []ChartSeries{{Name: "rate", X: xs, Y: ys}}, Marks: marks}))
	boxes := markBoxes(t, svg)
	if len(boxes) != len(marks) {
		t.Fatalf("%d label boxes, want %d", len(boxes), len(marks))
	}
	for i, a := range boxes {
		if a[1] < 0 {
			t.Errorf("label %d is above the picture: %v", i, a)
		}
		for j, b := range boxes[:i] {
			if a[0] < b[0]+b[2] && b[0] < a[0]+a[2] && a[1] < b[1]+b[3] && b[1] < a[1]+a[3] {
				t.Errorf("labels %q and %q overlap: %v and %v", marks[i].Label, marks[j].Label, a, b)
			}
		}
	}
	// Labels far apart share the lane nearest the plot.
	if boxes[4][1] != boxes[0][1] {
		t.Errorf("a label far from the others is not in the first lane: %v vs %v", boxes[4], boxes[0])
	}
}

// TestHistoryMarksNeverOverlap: on the history page, a change point and a
// Δ env mark at the same run (kafka-go upgraded with the step) get label
// boxes that do not overlap, on every x-axis.
func TestHistoryMarksNeverOverlap(t *testing.T) {
	runs := historyRuns()
	for i := 8; i < len(runs); i++ {
		runs[i].Environment.KafkaGoVersion = "v0.4.48"
	}
	for i := 9; i < len(runs); i++ {
		runs[i].Environment.GoVersion = "go1.26.0"
	}
	h := history.Build(runs, "record-send-rate", changepoint.Options{})
	if len(h.ChangePoints) != 1 || len(h.Marks) != 2 || h.Marks[0].Index != h.ChangePoints[0].Index {
		t.Fatalf("change points %+v, marks %+v: want a change point and a mark at one run, and a mark at the next", h.ChangePoints, h.Marks)
	}
	for _, x := range HistoryXAxes {
		v := NewHistoryView(h, "s", nil, HistoryQuery{Series: "s", X: x})
		boxes := markBoxes(t, string(v.Chart))
		if len(boxes) != 3 {
			t.Fatalf("x=%s: %d label boxes, want 3", x, len(boxes))
		}
		for i, a := range boxes {
			for _, b := range boxes[:i] {
				if a[0] < b[0]+b[2] && b[0] < a[0]+a[2] && a[1] < b[1]+b[3] && b[1] < a[1]+a[3] {
					t.Errorf("x=%s: label boxes overlap: %v and %v", x, a, b)
				}
			}
		}
	}
}
