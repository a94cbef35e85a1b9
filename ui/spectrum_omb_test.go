package ui

import (
	"encoding/json"
	"html/template"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/kbench/kbench/internal/compare"
	"github.com/kbench/kbench/internal/omb"
	"github.com/kbench/kbench/internal/rundoc"
)

// ombImport is internal/omb's hand-written OMB result imported, as the
// store gives it back.
func ombImport(t *testing.T, id uint) rundoc.Run {
	t.Helper()
	data, err := os.ReadFile("../internal/omb/testdata/kafka-1-topic-16-partitions-1kb.json")
	if err != nil {
		t.Fatal(err)
	}
	p, err := omb.Parse(data)
	if err != nil {
		t.Fatal(err)
	}
	in := p.Run("r.json")
	spec, _ := json.Marshal(in.Spec)
	env, _ := json.Marshal(in.Environment)
	m, _ := json.Marshal(in.Measurement)
	finished := time.Date(2025, 3, 1, 10, 0, 0, 0, time.UTC)
	r := rundoc.Run{ID: id, Label: in.Label, Workload: in.Workload, Status: rundoc.StatusSucceeded, Source: rundoc.SourceImported,
		Complete: true, Spec: string(spec), Metrics: in.Metrics, Series: in.Series, CreatedAt: finished, FinishedAt: &finished}
	r.SetDocuments(string(env), string(m))
	return r
}

// TestRunPageOMBCurves: an OMB import's page draws its quantile maps as
// lines of the latency and publish-delay spectra, named as OMB's
// quantiles without counts, stopping short of 100% (which the axis
// cannot place), with no histogram link; its 10 s windows are charts of
// the intervals; it links its omb.json.
func TestRunPageOMBCurves(t *testing.T) {
	r := ombImport(t, 7)
	v, err := NewRunView(&r, 0)
	if err != nil {
		t.Fatal(err)
	}
	v.SetHistograms(nil)
	if len(v.Spectra) != 2 || !v.SpectraCurves || v.HistogramsURL != "" || v.OMBURL != "/api/runs/7/omb.json" {
		t.Fatalf("%d spectra, curves %v, histograms %q, omb %q", len(v.Spectra), v.SpectraCurves, v.HistogramsURL, v.OMBURL)
	}
	latency, delay := string(v.Spectra[0]), string(v.Spectra[1])
	for _, want := range []string{"publish-latency: OMB&#39;s quantiles, no counts (aggregatedPublishLatencyQuantiles)", "e2e-latency: OMB&#39;s quantiles"} {
		if !strings.Contains(latency, want) {
			t.Errorf("the latency spectrum lacks %q", want)
		}
	}
	if !strings.Contains(delay, "publish-delay: OMB&#39;s quantiles") {
		t.Error("the publish delay spectrum lacks OMB's curve")
	}
	// 19 entries, the last at 100%: 18 points a line.
	if n := polylinePoints(latency); len(n) != 2 || n[0] != 18 || n[1] != 18 {
		t.Errorf("latency lines of %v points, want two of 18", n)
	}
	var windows []string
	for _, c := range v.Charts {
		if s := string(c); strings.Contains(s, "OMB&#39;s windows") {
			windows = append(windows, s)
		}
	}
	if len(windows) != 4 || !strings.Contains(windows[0], "record-send-rate") || !strings.Contains(windows[3], "e2e-latency-p99") ||
		strings.Contains(windows[3], "e2e-latency-max") {
		t.Errorf("%d window charts (rates, errors, backlog, latency p50 and p99 expected)", len(windows))
	}
}

// TestMergedSpectraOMBCurves: a comparison's spectra draw each OMB
// run's curve beside the columns' merged histograms, one line per run,
// and say so.
func TestMergedSpectraOMBCurves(t *testing.T) {
	runs := []rundoc.Run{ombImport(t, 2), ombImport(t, 3)}
	tbl, err := compare.Build([]compare.Column{{Name: "OMB", Runs: runs}}, compare.Options{})
	if err != nil {
		t.Fatal(err)
	}
	v := mergedSpectra(tbl, runs)
	if !v.Curves || len(v.Charts) != 3 {
		t.Fatalf("curves %v, %d charts; want a chart of each of OMB's three maps", v.Curves, len(v.Charts))
	}
	all := string(template.HTML(strings.Join([]string{string(v.Charts[0]), string(v.Charts[1]), string(v.Charts[2])}, "")))
	for _, want := range []string{"OMB run #2: OMB&#39;s quantiles", "OMB run #3: OMB&#39;s quantiles", "publish-delay by percentile"} {
		if !strings.Contains(all, want) {
			t.Errorf("the spectra lack %q", want)
		}
	}
	if none := mergedSpectra(tbl, nil); none.Curves || len(none.Charts) != 0 {
		t.Errorf("without the runs' documents: %+v", none)
	}
}
