package ui

import (
	"math"
	"slices"
	"strings"
	"testing"

	"github.com/kbench/kbench/internal/hdr"
	"github.com/kbench/kbench/internal/rundoc"
)

// TestSpectrumTicks: the X axis' decades are labelled as the percentiles
// they stand for, up to the last point's.
func TestSpectrumTicks(t *testing.T) {
	var got []string
	for _, tick := range spectrumTicks(3.2) {
		got = append(got, tick.Label)
	}
	if want := []string{"0%", "90%", "99%", "99.9%"}; !slices.Equal(got, want) {
		t.Errorf("ticks to 3.2: %v, want %v", got, want)
	}
	if x := spectrumX(99.9); math.Abs(x-3) > 1e-9 {
		t.Errorf("99.9%% sits at x=%v, want 3", x)
	}
}

// TestSpectrumChart: a line per histogram, ending at the max (in ms) at
// the total count's decade; an empty histogram draws nothing.
func TestSpectrumChart(t *testing.T) {
	h := hdr.New(rundoc.HistogramLowest, rundoc.HistogramHighest, rundoc.HistogramDigits)
	for v := int64(1); v <= 10_000; v++ {
		_ = h.RecordValue(v * 10) // 10 µs to 100 ms
	}
	empty := hdr.New(rundoc.HistogramLowest, rundoc.HistogramHighest, rundoc.HistogramDigits)
	svg := string(SpectrumChart("Latency by percentile", []SpectrumLine{{Name: "run #1", Hist: h}, {Name: "nothing", Hist: empty}}))
	for _, want := range []string{"Latency by percentile", "99.9%", "run #1: ", "latency (ms)"} {
		if !strings.Contains(svg, want) {
			t.Errorf("chart lacks %q", want)
		}
	}
	if strings.Contains(svg, "nothing") {
		t.Error("an empty histogram drew a line")
	}
	if n := polylinePoints(svg); len(n) != 1 || n[0] < 20 {
		t.Errorf("lines of %v points, want one line of the spectrum's points", n)
	}
	if none := string(SpectrumChart("x", nil)); !strings.Contains(none, "no latency histogram") {
		t.Errorf("a chart of no histogram: %s", none)
	}
}
